package sim

import (
	"fmt"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Function libraries (FUNCTION LOAD, FCALL), as redlease uses them
// (docs/design.md §4.7.5). A loaded copy of a library is its own Lua state:
// its chunk-level locals live as long as that copy. Like Redis, a server
// loads its libraries anew when it starts from a snapshot (a restart), on a
// full resync (REPLICAOF: its master's), on DEBUG RELOAD ([Server.Reload])
// and FUNCTION FLUSH or LOAD REPLACE; it keeps them on a promotion (a
// partial resync) and on FLUSHALL.

// library is one loaded copy of a library.
type library struct {
	name, src string
	L         *luaState
	fns       map[string]*lua.LFunction
}

// libraryName reads the name of a library's "#!lua name=<name>" line.
func libraryName(src string) (string, bool) {
	first, _, _ := strings.Cut(src, "\n")
	rest, ok := strings.CutPrefix(first, "#!lua name=")
	if !ok || rest == "" || strings.ContainsAny(rest, " \t") {
		return "", false
	}
	return rest, true
}

// loadLibrary makes a new loaded copy of src (s.mu held): the chunk runs
// once, registering its functions.
func (s *Server) loadLibrary(src string) (*library, any) {
	name, ok := libraryName(src)
	if !ok {
		return nil, Error("ERR Missing library metadata")
	}
	proto, cerr := s.w.engine.compileLibrary(src, s.w)
	if cerr != nil {
		return nil, cerr
	}
	lib := &library{name: name, src: src, L: newLua(), fns: map[string]*lua.LFunction{}}
	L := lib.L.L
	r := L.GetGlobal("redis").(*lua.LTable)
	L.SetField(r, "register_function", L.NewFunction(func(L *lua.LState) int {
		lib.fns[L.CheckString(1)] = L.CheckFunction(2)
		return 0
	}))
	lib.L.env.s = s
	L.Push(L.NewFunctionFromProto(proto))
	if err := L.PCall(0, 0, nil); err != nil {
		L.SetTop(0)
		return nil, Error("ERR Error registering functions: " + oneLine(err.Error()))
	}
	L.SetField(r, "register_function", lua.LNil)
	return lib, nil
}

// reloadLibraries replaces s's libraries by new copies of srcs (s.mu
// held).
func (s *Server) reloadLibraries(srcs []string) {
	s.libs = map[string]*library{}
	for _, src := range srcs {
		if lib, err := s.loadLibrary(src); err == nil {
			s.libs[lib.name] = lib
		}
	}
}

// librarySources are the texts of s's libraries (s.mu held): what an RDB
// file or a full resync carries.
func (s *Server) librarySources() []string {
	var out []string
	for _, lib := range s.libs {
		out = append(out, lib.src)
	}
	return out
}

// functionCmd is FUNCTION LOAD [REPLACE], FUNCTION FLUSH and FUNCTION
// DELETE.
func (s *Server) functionCmd(args []string) any {
	if s.script != nil {
		return Error("ERR This Redis command is not allowed from script")
	}
	if len(args) < 2 {
		return wrongArgs("function")
	}
	switch sub := strings.ToLower(args[1]); sub {
	case "load":
		return s.functionLoad(args[2:])
	case "flush":
		s.libs = map[string]*library{}
		s.propagateLibraries()
		return Status("OK")
	case "delete":
		if len(args) != 3 {
			return wrongArgs("function|delete")
		}
		if s.libs[args[2]] == nil {
			return Error("ERR Library not found")
		}
		delete(s.libs, args[2])
		s.propagateLibraries()
		return Status("OK")
	}
	s.w.unknownCommand(args)
	return Error(fmt.Sprintf("ERR unknown subcommand '%s'. Try FUNCTION HELP.", args[1]))
}

// functionLoad is FUNCTION LOAD [REPLACE] src.
func (s *Server) functionLoad(args []string) any {
	replace := len(args) == 2 && strings.EqualFold(args[0], "replace")
	if len(args) != 1 && !replace {
		return wrongArgs("function|load")
	}
	if err := s.writable(); err != nil {
		return err
	}
	lib, err := s.loadLibrary(args[len(args)-1])
	if err != nil {
		return err
	}
	if s.libs[lib.name] != nil && !replace {
		return Error(fmt.Sprintf("ERR Library '%s' already exists", lib.name))
	}
	s.libs[lib.name] = lib
	s.propagateLibraries()
	return lib.name
}

// propagateLibraries makes s's replicas load what s has (s.mu held): a
// replica keeps the copies it has of the libraries that did not change.
func (s *Server) propagateLibraries() {
	for _, r := range s.reps {
		r.mu.Lock()
		keep := map[string]*library{}
		for name, lib := range s.libs {
			if old := r.libs[name]; old != nil && old.src == lib.src {
				keep[name] = old
			} else if cp, err := r.loadLibrary(lib.src); err == nil {
				keep[name] = cp
			}
		}
		r.libs = keep
		r.mu.Unlock()
	}
}

// compileLibrary compiles a library's text (after its "#!lua" line) as w
// runs it (mutated by a control, coverage-instrumented as "library"),
// once per text and variant.
func (e *engine) compileLibrary(src string, w *World) (*lua.FunctionProto, any) {
	key := "library/" + w.variant + "/" + sha1hex(src)
	e.mu.Lock()
	p := e.cache[key]
	e.mu.Unlock()
	if p != nil {
		return p.fn, nil
	}
	_, body, _ := strings.Cut(src, "\n")
	body = "\n" + body // its lines keep their numbers
	if w.opts.Mutate != nil {
		body = w.opts.Mutate("library", body)
	}
	body = e.cov.instrument("library", body)
	chunk, err := parse.Parse(strings.NewReader(body), "@user_function")
	if err != nil {
		return nil, Error("ERR Error compiling function: user_function:" + oneLine(err.Error()))
	}
	fn, err := lua.Compile(chunk, "@user_function")
	if err != nil {
		return nil, Error("ERR Error compiling function: user_function:" + oneLine(err.Error()))
	}
	e.mu.Lock()
	e.cache[key] = &proto{sha: key, name: "library", fn: fn}
	e.mu.Unlock()
	return fn, nil
}

// fcall is FCALL function numkeys key... arg....
func (s *Server) fcall(args []string) any {
	if len(args) < 3 {
		return wrongArgs("fcall")
	}
	var lib *library
	var fn *lua.LFunction
	for _, l := range s.libs {
		if f := l.fns[args[1]]; f != nil {
			lib, fn = l, f
		}
	}
	if fn == nil {
		return Error("ERR Function not found")
	}
	nkeys, err := strconv.Atoi(args[2])
	if err != nil || nkeys < 0 || nkeys > len(args)-3 {
		return Error("ERR Bad number of keys provided")
	}
	s.w.countScript(args[1])
	lib.L.env.s = s
	L := lib.L.L
	keys, argv := luaArgs(L, args, nkeys)
	s.script = &scriptRun{sha: args[1], name: args[1]}
	defer func() { s.script = nil }()
	L.Push(fn)
	L.Push(keys)
	L.Push(argv)
	if err := L.PCall(2, 1, nil); err != nil {
		L.SetTop(0)
		return functionError(err, args[1])
	}
	ret := L.Get(-1)
	L.SetTop(0)
	reply := luaToReply(ret)
	if log := s.w.opts.Log; log != nil {
		log(fmt.Sprintf("%s(%.6s) fcall %s %v %v -> %v", s.name, s.runID, args[1], args[3:3+nkeys], args[3+nkeys:], reply))
	}
	return reply
}

// functionError words a function's runtime error as Redis 7.0 does.
func functionError(err error, fn string) any {
	e := scriptError(err, fn)
	if s, ok := e.(Error); ok {
		return Error(strings.ReplaceAll(string(s), "user_script", "user_function"))
	}
	return e
}

package sim

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// The script engine: gopher-lua (Lua 5.1, as in Redis) running whatever
// script text a client sends, compiled once per text and variant
// (coverage-instrumented, mutated by a control) and cached by SHA1.

type proto struct {
	sha  string
	name string // the script's own name: the first "-- name:" comment
	fn   *lua.FunctionProto
}

type engine struct {
	mu    sync.Mutex
	cache map[string]*proto // variant + sha -> compiled
	cov   *Coverage
}

// compiled scripts are shared by every world of the process.
var sharedEngine = &engine{cache: map[string]*proto{}, cov: newCoverage()}

func sha1hex(src string) string {
	h := sha1.Sum([]byte(src))
	return hex.EncodeToString(h[:])
}

var scriptName = regexp.MustCompile(`(?m)^-- ([a-z_]+): `)

func nameOf(src string) string {
	if m := scriptName.FindStringSubmatch(src); m != nil {
		return m[1]
	}
	return "script"
}

// compile returns the compiled form of src as w runs it.
func (e *engine) compile(src string, w *World) (*proto, any) {
	sha := sha1hex(src)
	variant := ""
	if w != nil {
		variant = w.variant
	}
	key := variant + "/" + sha
	e.mu.Lock()
	p := e.cache[key]
	e.mu.Unlock()
	if p != nil {
		return p, nil
	}
	name := nameOf(src)
	run := src
	if w != nil && w.opts.Mutate != nil {
		run = w.opts.Mutate(name, run)
	}
	run = e.cov.instrument(name, run)
	chunk, err := parse.Parse(strings.NewReader(run), "@user_script")
	if err != nil {
		return nil, Error("ERR Error compiling script (new function): user_script:" + oneLine(err.Error()))
	}
	fn, err := lua.Compile(chunk, "@user_script")
	if err != nil {
		return nil, Error("ERR Error compiling script (new function): user_script:" + oneLine(err.Error()))
	}
	p = &proto{sha: sha, name: name, fn: fn}
	e.mu.Lock()
	e.cache[key] = p
	e.mu.Unlock()
	return p, nil
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// scriptRun is the state of the script a server is running.
type scriptRun struct {
	sha, name string
}

// luaState is a Lua state with the server it runs for (states are pooled
// and reused by servers of any world: they keep no state between scripts
// but the KEYS and ARGV globals every script sets).
type luaState struct {
	L   *lua.LState
	env struct{ s *Server }
}

var luaPool sync.Pool

func init() { luaPool.New = func() any { return newLua() } }

func getLua() *luaState { return luaPool.Get().(*luaState) }

// release returns the server's Lua state to the pool (s.mu held).
func (s *Server) releaseLua() {
	if s.L != nil {
		s.L.env.s = nil
		luaPool.Put(s.L)
		s.L = nil
	}
}

// newLua makes a Lua state: the libraries Redis opens, and the redis
// table, whose functions act on the state's current server.
func newLua() *luaState {
	ls := &luaState{}
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 64, RegistrySize: 1024})
	ls.L = L
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	r := L.NewTable()
	L.SetField(r, "call", L.NewFunction(func(L *lua.LState) int { return ls.env.s.luaCall(L, true) }))
	L.SetField(r, "pcall", L.NewFunction(func(L *lua.LState) int { return ls.env.s.luaCall(L, false) }))
	L.SetField(r, "error_reply", L.NewFunction(func(L *lua.LState) int {
		t := L.NewTable()
		msg := L.CheckString(1)
		if !strings.HasPrefix(msg, "-") {
			msg = "-" + msg
		}
		L.SetField(t, "err", lua.LString(msg))
		L.Push(t)
		return 1
	}))
	L.SetField(r, "status_reply", L.NewFunction(func(L *lua.LState) int {
		t := L.NewTable()
		L.SetField(t, "ok", lua.LString(L.CheckString(1)))
		L.Push(t)
		return 1
	}))
	L.SetField(r, "sha1hex", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(sha1hex(L.CheckString(1))))
		return 1
	}))
	L.SetField(r, "log", L.NewFunction(func(L *lua.LState) int { return 0 }))
	for i, n := range []string{"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING"} {
		L.SetField(r, n, lua.LNumber(i))
	}
	L.SetGlobal("redis", r)
	L.SetGlobal("redlease_sim_cov", L.NewFunction(func(L *lua.LState) int {
		sharedEngine.cov.hit(int(L.CheckNumber(1)))
		return 0
	}))
	return ls
}

// eval runs EVAL or EVALSHA.
func (s *Server) eval(name string, args []string) any {
	if len(args) < 3 {
		return wrongArgs(name)
	}
	var p *proto
	if name == "evalsha" {
		sha := args[1]
		if p = s.scripts[sha]; p == nil {
			if p = s.scripts[strings.ToLower(sha)]; p == nil {
				return Error("NOSCRIPT No matching script. Please use EVAL.")
			}
		}
	}
	nkeys, err := strconv.Atoi(args[2])
	if err != nil {
		return errNotInt
	}
	if nkeys < 0 {
		return Error("ERR Number of keys can't be negative")
	}
	if nkeys > len(args)-3 {
		return Error("ERR Number of keys can't be greater than number of args")
	}
	if p == nil {
		var cerr any
		if p, cerr = s.w.engine.compile(args[1], s.w); cerr != nil {
			return cerr
		}
		s.scripts[p.sha] = p
	}
	s.w.countScript(p.name)
	if s.L == nil {
		s.L = getLua()
	}
	s.L.env.s = s
	L := s.L.L
	keys, argv := luaArgs(L, args, nkeys)
	L.SetGlobal("KEYS", keys)
	L.SetGlobal("ARGV", argv)
	s.script = &scriptRun{sha: p.sha, name: p.name}
	defer func() { s.script = nil }()
	L.Push(L.NewFunctionFromProto(p.fn))
	if err := L.PCall(0, 1, nil); err != nil {
		L.SetTop(0)
		return scriptError(err, p.sha)
	}
	ret := L.Get(-1)
	L.SetTop(0)
	reply := luaToReply(ret)
	if log := s.w.opts.Log; log != nil {
		log(fmt.Sprintf("%s(%.6s) %s %v %v -> %v", s.name, s.runID, p.name, args[3:3+nkeys], args[3+nkeys:], reply))
	}
	return reply
}

// luaArgs are the KEYS and ARGV tables of a call (EVAL or FCALL: the
// keys and arguments after name and numkeys).
func luaArgs(L *lua.LState, args []string, nkeys int) (keys, argv *lua.LTable) {
	keys, argv = L.CreateTable(nkeys, 0), L.CreateTable(len(args)-3-nkeys, 0)
	for i, k := range args[3 : 3+nkeys] {
		keys.RawSetInt(i+1, lua.LString(k))
	}
	for i, a := range args[3+nkeys:] {
		argv.RawSetInt(i+1, lua.LString(a))
	}
	return keys, argv
}

// scriptError words a script's runtime error as Redis 7.0 does: the error
// of a redis.call keeps its own code; others are ERR.
func scriptError(err error, sha string) any {
	var msg string
	if ae, ok := err.(*lua.ApiError); ok {
		if t, ok := ae.Object.(*lua.LTable); ok {
			if e, ok := t.RawGetString("err").(lua.LString); ok {
				return Error(strings.TrimPrefix(string(e), "-") + " script: " + sha + ", on @user_script:1.")
			}
		}
		msg = ae.Object.String()
	} else {
		msg = err.Error()
	}
	return Error("ERR user_script:1: " + oneLine(msg) + " script: " + sha + ", on @user_script:1.")
}

// luaCall is redis.call (raise) and redis.pcall (return the error).
func (s *Server) luaCall(L *lua.LState, raise bool) int {
	n := L.GetTop()
	if n == 0 {
		return s.luaFail(L, raise, "ERR Please specify at least one argument for this redis lib call")
	}
	args := make([]string, n)
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			args[i-1] = string(v)
		case lua.LNumber:
			args[i-1] = luaNumberString(float64(v))
		default:
			return s.luaFail(L, raise, "ERR Lua redis lib command arguments must be strings or integers")
		}
	}
	name := strings.ToLower(args[0])
	if scriptForbidden[name] {
		return s.luaFail(L, raise, "ERR This Redis command is not allowed from script")
	}
	reply := s.command(nil, name, args)
	if e, ok := reply.(Error); ok {
		return s.luaFail(L, raise, string(e))
	}
	L.Push(replyToLua(L, reply))
	return 1
}

var scriptForbidden = map[string]bool{"eval": true, "evalsha": true, "script": true, "fcall": true, "function": true, "subscribe": true,
	"ssubscribe": true, "psubscribe": true, "unsubscribe": true, "sunsubscribe": true, "punsubscribe": true,
	"hello": true, "client": true, "select": true, "quit": true}

func (s *Server) luaFail(L *lua.LState, raise bool, msg string) int {
	t := L.NewTable()
	L.SetField(t, "err", lua.LString(msg))
	if raise {
		L.Error(t, 1)
		return 0
	}
	L.Push(t)
	return 1
}

// luaNumberString formats a Lua number as Lua 5.1 does (%.14g).
func luaNumberString(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return fmt.Sprintf("%.14g", f)
}

func replyToLua(L *lua.LState, r any) lua.LValue {
	switch v := r.(type) {
	case nil:
		return lua.LFalse
	case int64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case Status:
		t := L.NewTable()
		L.SetField(t, "ok", lua.LString(v))
		return t
	case []any:
		t := L.CreateTable(len(v), 0)
		for i, e := range v {
			t.RawSetInt(i+1, replyToLua(L, e))
		}
		return t
	}
	panic(fmt.Sprintf("sim: reply %T in a script", r))
}

func luaToReply(v lua.LValue) any {
	switch v := v.(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return int64(v)
	case lua.LBool:
		if v {
			return int64(1)
		}
		return nil
	case *lua.LTable:
		if e, ok := v.RawGetString("err").(lua.LString); ok {
			return Error(strings.TrimPrefix(string(e), "-"))
		}
		if st, ok := v.RawGetString("ok").(lua.LString); ok {
			return Status(st)
		}
		var out []any
		for i := 1; ; i++ {
			e := v.RawGetInt(i)
			if e == lua.LNil {
				break
			}
			out = append(out, luaToReply(e))
		}
		if out == nil {
			out = []any{}
		}
		return out
	}
	return nil
}

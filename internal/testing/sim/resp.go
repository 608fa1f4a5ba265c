package sim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// RESP2, the subset the server needs: requests are arrays of bulk strings
// (or inline commands); replies are built from the types below.

// Status is a simple-string reply (+OK).
type Status string

// Error is an error reply; its text starts with the error code (ERR,
// WRONGTYPE, NOSCRIPT, ...), as on a real server.
type Error string

func (e Error) Error() string { return string(e) }

// Replies are Status, Error, int64, string (bulk), nil (null bulk) or []any
// (array).

var errProtocol = errors.New("sim: protocol error")

// readCommand reads one request.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 {
		return nil, nil
	}
	if line[0] != '*' {
		return splitInline(line), nil
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 || n > 1<<20 {
		return nil, errProtocol
	}
	args := make([]string, n)
	for i := range args {
		l, err := readLine(r)
		if err != nil {
			return nil, err
		}
		if len(l) == 0 || l[0] != '$' {
			return nil, errProtocol
		}
		size, err := strconv.Atoi(l[1:])
		if err != nil || size < 0 || size > 512<<20 {
			return nil, errProtocol
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		args[i] = string(buf[:size])
	}
	return args, nil
}

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if len(line) >= 2 && line[len(line)-2] == '\r' {
		return line[:len(line)-2], nil
	}
	return line[:len(line)-1], nil
}

func splitInline(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == '\t' {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return out
}

// appendReply encodes a reply.
func appendReply(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "$-1\r\n"...)
	case Status:
		return append(append(append(b, '+'), v...), "\r\n"...)
	case Error:
		return append(append(append(b, '-'), v...), "\r\n"...)
	case int64:
		return append(strconv.AppendInt(append(b, ':'), v, 10), "\r\n"...)
	case int:
		return append(strconv.AppendInt(append(b, ':'), int64(v), 10), "\r\n"...)
	case string:
		b = strconv.AppendInt(append(b, '$'), int64(len(v)), 10)
		return append(append(append(b, "\r\n"...), v...), "\r\n"...)
	case []any:
		b = append(strconv.AppendInt(append(b, '*'), int64(len(v)), 10), "\r\n"...)
		for _, e := range v {
			b = appendReply(b, e)
		}
		return b
	case rawReply:
		return append(b, v...)
	case nilArray:
		return append(b, "*-1\r\n"...)
	default:
		panic(fmt.Sprintf("sim: cannot encode %T", v))
	}
}

// nilArray is the null array reply.
type nilArray struct{}

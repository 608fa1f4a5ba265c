package testnodes

// ReplyError is an error reply as go-redis reports it: it implements
// redis.Error (proto.RedisError), so that code classifying replies sees
// it as the server's answer, not as a network error.
type ReplyError string

func (e ReplyError) Error() string { return string(e) }

// RedisError marks e as a reply of the server.
func (ReplyError) RedisError() {}

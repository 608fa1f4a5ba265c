package fence

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// The headers of a fenced HTTP request and of its refusal.
const (
	// HeaderResource names the resource a request writes.
	HeaderResource = "Redlease-Resource"
	// HeaderToken carries the request's fencing token (decimal).
	HeaderToken = "Redlease-Token"
	// HeaderHighest, on a 409 response, is the highest token the
	// resource had accepted (decimal).
	HeaderHighest = "Redlease-Highest-Token"
)

// SetHeaders sets the fence headers of a request that writes resource
// under token. It refuses an empty resource and a zero token.
func SetHeaders(h http.Header, resource string, token uint64) error {
	if err := validate(resource, token); err != nil {
		return err
	}
	h.Set(HeaderResource, resource)
	h.Set(HeaderToken, strconv.FormatUint(token, 10))
	return nil
}

// FromRequest reads the fence headers of r ([SetHeaders]); the error
// names a missing or bad value.
func FromRequest(r *http.Request) (resource string, token uint64, err error) {
	resource = r.Header.Get(HeaderResource)
	v := r.Header.Get(HeaderToken)
	token, perr := strconv.ParseUint(v, 10, 64)
	if perr != nil {
		return "", 0, fmt.Errorf("%w: header %s=%q is not a decimal token", ErrInvalidToken, HeaderToken, v)
	}
	if err := validate(resource, token); err != nil {
		return "", 0, err
	}
	return resource, token, nil
}

// Middleware runs next behind g's check of the request's resource and
// token (headers [HeaderResource], [HeaderToken]): with a [*Local], the
// handler runs under the resource's lock, so the check and the handler's
// write are one atomic step. The handler's request context carries the
// token ([TokenFrom]). Answers without running next: 400 when a header
// is missing or bad; 409 with [HeaderHighest] (and the request's
// resource and token headers) when the token is below the highest; 503
// when the request's context ended first; 500 for another error of g.
func Middleware(g Guard, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resource, token, err := FromRequest(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		err = g.Do(r.Context(), resource, token, func(ctx context.Context) error {
			next.ServeHTTP(w, r.WithContext(WithToken(ctx, token)))
			return nil
		})
		var stale *StaleTokenError
		switch {
		case err == nil:
		case errors.As(err, &stale):
			_ = SetHeaders(w.Header(), resource, token) // valid: checked above
			w.Header().Set(HeaderHighest, strconv.FormatUint(stale.Highest, 10))
			http.Error(w, err.Error(), http.StatusConflict)
		case r.Context().Err() != nil:
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		default:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
}

// ResponseError returns the [*StaleTokenError] a 409 response of
// [Middleware] reports, and nil for any other response.
func ResponseError(resp *http.Response) error {
	if resp.StatusCode != http.StatusConflict {
		return nil
	}
	h, err := strconv.ParseUint(resp.Header.Get(HeaderHighest), 10, 64)
	if err != nil {
		return nil // a 409 of something else than the fence
	}
	t, _ := strconv.ParseUint(resp.Header.Get(HeaderToken), 10, 64)
	return &StaleTokenError{Resource: resp.Header.Get(HeaderResource), Token: t, Highest: h}
}

// Transport is the client side of [Middleware]: an http.RoundTripper that
// sends every request with the fence headers of Resource and the token:
// Token, or when it is 0 the request context's ([TokenFrom]), so that an
// http.Client whose requests carry a term's context needs no token copied
// by hand. A request with neither fails before it is sent. Read a 409
// with [ResponseError]. A Transport is safe for concurrent use.
type Transport struct {
	// Base sends the requests; default: http.DefaultTransport.
	Base http.RoundTripper
	// Resource is the resource every request writes.
	Resource string
	// Token is the fencing token; default: the request context's.
	Token uint64
}

// RoundTrip sends a copy of req with the fence headers set.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	token := t.Token
	if token == 0 {
		token, _ = TokenFrom(req.Context())
	}
	r := req.Clone(req.Context())
	if err := SetHeaders(r.Header, t.Resource, token); err != nil {
		if req.Body != nil {
			_ = req.Body.Close() // RoundTrip must close the body, even on errors
		}
		return nil, err
	}
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

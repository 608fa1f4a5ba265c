package fencetest

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/redlease/redlease/fence"
)

// Post sends body to url through c (whose Transport is a fence.Transport)
// with token in the request's context, and returns the guard's verdict:
// a *fence.StaleTokenError for a 409, an error for any other status but
// 200, nil when the write was accepted.
func Post(ctx context.Context, c *http.Client, url string, token uint64, body io.Reader) error {
	req, err := http.NewRequestWithContext(fence.WithToken(ctx, token), http.MethodPost, url, body)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := fence.ResponseError(resp); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}

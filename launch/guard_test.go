package launch

import (
	"context"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
)

type fakeExit struct {
	gone bool
	how  string
	done chan struct{}
}

func (f *fakeExit) Exited() (bool, string) { return f.gone, f.how }
func (f *fakeExit) Done() <-chan struct{}  { return f.done }

// failingClient records how often it was called and fails with reason.
type failingClient struct {
	reason record.Reason
	calls  int
	onDo   func()
	backend.Client
}

func (c *failingClient) Do(_ context.Context, _ *backend.Request, res *record.Result) {
	c.calls++
	if c.onDo != nil {
		c.onDo()
	}
	res.Reason = c.reason
	if c.reason != record.ReasonNone {
		res.Error = "boom"
	}
}

func TestGuard(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	tests := []struct {
		name       string
		exited     bool
		reason     record.Reason
		wantReason record.Reason
		wantErr    string
		wantCalls  int
	}{
		{"running server success", false, record.ReasonNone, record.ReasonNone, "", 1},
		{"running server http 4xx untouched", false, record.ReasonHTTP4xx, record.ReasonHTTP4xx, "boom", 1},
		{"exited before send", true, record.ReasonNone, record.ReasonServerExited, "server exited (code 137)", 0},
		{"exited before send, client would fail", true, record.ReasonConnection, record.ReasonServerExited, "server exited (code 137)", 0},
		{"running server connection error kept", false, record.ReasonConnection, record.ReasonConnection, "boom", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fe := &fakeExit{gone: tc.exited, how: "code 137", done: closed}
			if !tc.exited {
				fe.done = make(chan struct{})
			}
			fc := &failingClient{reason: tc.reason}
			g := Guard(fc, fe).(*guarded)
			g.exitWait = 0
			var res record.Result
			g.Do(context.Background(), &backend.Request{}, &res)
			if res.Reason != tc.wantReason || res.Error != tc.wantErr || fc.calls != tc.wantCalls {
				t.Errorf("reason %q error %q calls %d", res.Reason, res.Error, fc.calls)
			}
		})
	}
}

// TestGuardRelabelsDyingServer: a request that fails on the connection
// while the server dies is relabelled once the exit is seen.
func TestGuardRelabelsDyingServer(t *testing.T) {
	fe := &fakeExit{how: "signal: killed", done: make(chan struct{})}
	fc := &failingClient{reason: record.ReasonTruncated}
	fc.onDo = func() { go func() { fe.gone = true; close(fe.done) }() }
	g := Guard(fc, fe)
	var res record.Result
	g.Do(context.Background(), &backend.Request{}, &res)
	if res.Reason != record.ReasonServerExited || res.Error != "server exited (signal: killed)" {
		t.Errorf("reason %q error %q", res.Reason, res.Error)
	}
}

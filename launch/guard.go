package launch

import (
	"context"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
)

// ExitWatcher is what Guard needs of a launched server: whether and how it
// exited, and a channel closed when it does. *Server implements it.
type ExitWatcher interface {
	Exited() (bool, string)
	Done() <-chan struct{}
}

// Guard wraps c so that requests to a server that has exited fail with
// record.ReasonServerExited and the error "server exited (code N)":
// requests sent after the exit fail at once without touching the network,
// and a request that failed on the connection while the server was dying
// is re-labelled once the exit is seen (waiting up to exitWait for it).
func Guard(c backend.Client, srv ExitWatcher) backend.Client {
	return &guarded{Client: c, srv: srv, exitWait: 2 * time.Second}
}

type guarded struct {
	backend.Client
	srv      ExitWatcher
	exitWait time.Duration
}

// connectionReasons are failures a dying server causes.
var connectionReasons = map[record.Reason]bool{
	record.ReasonConnection:    true,
	record.ReasonTruncated:     true,
	record.ReasonMalformed:     true,
	record.ReasonEmptyResponse: true,
	record.ReasonTimeout:       true,
	record.ReasonHTTP5xx:       true,
}

// Do sends req unless the server has exited; see Guard.
func (g *guarded) Do(ctx context.Context, req *backend.Request, res *record.Result) {
	if gone, how := g.srv.Exited(); gone {
		markExited(res, how)
		return
	}
	g.Client.Do(ctx, req, res)
	if res.OK() || !connectionReasons[res.Reason] {
		return
	}
	t := time.NewTimer(g.exitWait)
	defer t.Stop()
	select {
	case <-g.srv.Done():
	case <-t.C:
	case <-ctx.Done():
	}
	if gone, how := g.srv.Exited(); gone {
		markExited(res, how)
	}
}

func markExited(res *record.Result, how string) {
	res.Reason = record.ReasonServerExited
	res.Error = "server exited (" + how + ")"
}

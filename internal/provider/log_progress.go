package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// Progress is logged at INFO (TF_LOG_PROVIDER=info shows it), one line per change of what is
// being waited for: queued (with the place in the queue when the service gives it), running
// (with the node, its class and the step), and the end (with the time it took). A wait's own
// reads repeat most records unchanged and a queue moves on every start, so a line is written
// only when the phase changes: a new place in the queue or a new sampler step is not a line. A
// batch of 1,000 jobs logs a few lines per job, not one per read.

// progressLog writes the progress lines of one wait. Its methods may be called from the wait's
// goroutine and the caller's; they serialise on mu.
type progressLog struct {
	ctx     context.Context
	what    string // "job", "model request", "prompt"
	idField string // "job_id", "request_id", "prompt_id"
	id      string
	started time.Time

	mu    sync.Mutex
	phase string // the phase last logged; "" before the first line
}

func newProgressLog(ctx context.Context, what, idField, id string) *progressLog {
	return &progressLog{ctx: ctx, what: what, idField: idField, id: id, started: time.Now()}
}

// note logs msg with fields when phase differs from the phase last logged.
func (p *progressLog) note(phase, msg string, fields map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if phase == p.phase {
		return
	}
	p.phase = phase
	fields[p.idField] = p.id
	logInfo(p.ctx, p.what+" "+msg, fields)
}

// finished logs the end of the wait: status, and the time the service says the run took (from
// its created and completed times) or else the time waited here.
func (p *progressLog) finished(status string, took time.Duration, fields map[string]any) {
	fields["status"] = status
	if took > 0 {
		fields["took"] = took.Round(time.Millisecond).String()
	}
	fields["waited"] = time.Since(p.started).Round(time.Millisecond).String()
	p.note("end", "finished", fields)
}

// newJobProgressLog starts the progress lines of a wait for job, with a line for the record it
// starts from: a job that stays queued, at the same place, until it runs is logged as queued.
func newJobProgressLog(ctx context.Context, job *client.Job) *progressLog {
	p := newProgressLog(ctx, "job", "job_id", job.ID)
	p.job(job)
	return p
}

// job logs a job record's phase.
func (p *progressLog) job(j *client.Job) {
	switch {
	case client.JobTerminal(j.Status):
		fields := map[string]any{}
		if j.Error != nil {
			fields["error_code"] = j.Error.Code
		}
		p.finished(j.Status, serviceDuration(j.CreatedAt, j.CompletedAt), fields)
	case j.Status == client.JobQueued:
		fields := map[string]any{"status": j.Status}
		if j.QueuePosition != nil {
			fields["queue_position"] = *j.QueuePosition // the value, not the pointer
		}
		p.note(j.Status, "queued", fields)
	case j.Status == client.JobRunning:
		fields, node := runningFields(j.Progress)
		p.note(j.Status+" "+node, "running", fields)
	default:
		p.note(j.Status, j.Status, map[string]any{"status": j.Status})
	}
}

// runningFields are the fields of a running job's line, and the node it runs ("" when the
// service does not say): a new node is a new line, a new step of the same node is not.
func runningFields(pr *client.Progress) (map[string]any, string) {
	fields := map[string]any{"status": client.JobRunning}
	if pr == nil {
		return fields, ""
	}
	node := ""
	if pr.CurrentNode != nil {
		node = *pr.CurrentNode
		fields["node"] = node
	}
	if pr.CurrentNodeClass != nil {
		fields["class"] = *pr.CurrentNodeClass
	}
	if pr.Step != nil && pr.Steps != nil {
		fields["step"] = fmt.Sprintf("%d/%d", *pr.Step, *pr.Steps)
	}
	if pr.NodesTotal > 0 {
		fields["nodes"] = fmt.Sprintf("%d/%d", pr.NodesDone, pr.NodesTotal)
	}
	fields["progress"] = fmt.Sprintf("%.0f%%", pr.Value*100)
	if pr.Message != nil {
		fields["message"] = *pr.Message
	}
	return fields, node
}

// serviceDuration is completed - created, as the service wrote them; 0 when either is missing
// or unreadable.
func serviceDuration(created string, completed *string) time.Duration {
	if completed == nil {
		return 0
	}
	from, err1 := time.Parse(time.RFC3339Nano, created)
	to, err2 := time.Parse(time.RFC3339Nano, *completed)
	if err1 != nil || err2 != nil || to.Before(from) {
		return 0
	}
	return to.Sub(from)
}

// newRouterProgressLog starts the progress lines of a wait for a model request, with a line for
// the record it starts from.
func newRouterProgressLog(ctx context.Context, q *client.QueueRequest) *progressLog {
	p := newProgressLog(ctx, "model request", "request_id", q.RequestID)
	p.router(q)
	return p
}

// router logs a model request's phase: queued (with its place), running, or completed.
func (p *progressLog) router(q *client.QueueRequest) {
	fields := map[string]any{"status": q.Status}
	switch {
	case q.Completed():
		p.finished(q.Status, 0, fields)
	case q.QueuePosition != nil:
		fields["queue_position"] = *q.QueuePosition
		p.note("queued", "queued", fields)
	default:
		p.note(q.Status, "status "+q.Status, fields)
	}
}

// promptProgress returns the callbacks of a prompt's wait: a line per new status, per node the
// socket says is executing (with its class, from the workflow), and one at the end.
func promptProgress(ctx context.Context, id string, classes map[string]string) (onStatus func(string), onMessage func(*client.SocketMessage)) {
	p := newProgressLog(ctx, "prompt", "prompt_id", id)
	onStatus = func(s string) {
		if client.PromptTerminal(s) {
			p.finished(s, 0, map[string]any{})
			return
		}
		p.note(s, "status "+s, map[string]any{"status": s})
	}
	onMessage = func(m *client.SocketMessage) {
		if m == nil || m.Type != "executing" {
			return
		}
		var data struct {
			Node *string `json:"node"`
		}
		if json.Unmarshal(m.Data, &data) != nil || data.Node == nil || *data.Node == "" {
			return
		}
		fields := map[string]any{"node": *data.Node}
		if c, ok := classes[*data.Node]; ok {
			fields["class"] = c
		}
		p.note("executing "+*data.Node, "running", fields)
	}
	return onStatus, onMessage
}

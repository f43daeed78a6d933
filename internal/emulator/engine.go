package emulator

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"time"
)

// event is one entry of a job's live stream. Output events are rendered when
// sent, because their links depend on the request.
type event struct {
	name     string
	data     any
	output   *jobOutput
	terminal bool // the stream ends after this event
}

func (s *Server) startEngine() {
	for i := 0; i < s.opts.Workers; i++ {
		s.wg.Add(1)
		go s.worker()
	}
	s.wg.Add(1)
	go s.janitor()
}

// worker takes queued jobs in order and executes them.
func (s *Server) worker() {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.closed {
			s.workCond.Wait()
		}
		if s.closed {
			s.mu.Unlock()
			return
		}
		j := s.queue[0]
		if wait := j.createdAt.Add(s.opts.QueueDelay).Sub(s.now()); wait > 0 && !s.isFast() {
			s.mu.Unlock()
			_ = s.sleep(context.Background(), wait)
			continue
		}
		now := s.now()
		s.removeFromQueueLocked(j)
		j.startedAt = now
		s.setStatusLocked(j, statusRunning)
		s.mu.Unlock()
		s.execute(j)
	}
}

// janitor expires jobs whose retention passed, so their assets are freed even
// when nobody reads them.
func (s *Server) janitor() {
	defer s.wg.Done()
	every := min(s.opts.Retention, 30*time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			now := s.now()
			s.mu.Lock()
			for _, j := range s.jobs {
				s.expireIfDueLocked(j, now)
			}
			s.mu.Unlock()
		}
	}
}

// now reads the server's clock (Options.Now).
func (s *Server) now() time.Time { return s.opts.Now() }

func (s *Server) isFast() bool {
	select {
	case <-s.fast:
		return true
	default:
		return false
	}
}

// CompleteJobs makes every duration (node, step, queue delay) zero from now on,
// so running and queued jobs finish at once, and waits (up to 10s) until no job
// is queued, running or canceling.
func (s *Server) CompleteJobs() {
	s.fastOnce.Do(func() { close(s.fast) })
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		busy := false
		for _, j := range s.jobs {
			if !isTerminal(j.status) {
				busy = true
				break
			}
		}
		s.mu.Unlock()
		if !busy {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// FailNode makes every later execution of a node of classType fail with this
// job.error code (node_execution_error when empty) and message.
func (s *Server) FailNode(classType string, code, message string) {
	if code == "" {
		code = "node_execution_error"
	}
	if message == "" {
		message = classType + " failed"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodeFail[classType] = jobError{Code: code, Message: message}
}

// ClearNodeFailures undoes every FailNode.
func (s *Server) ClearNodeFailures() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodeFail = map[string]jobError{}
}

// ---- state transitions; all need s.mu held ----

func (s *Server) notifyLocked(j *job, e event) {
	j.events = append(j.events, e)
	close(j.changed)
	j.changed = make(chan struct{})
	if j.v1 {
		s.publishV1Locked(j, e) // the v1 socket's messages (socket.go)
	}
}

func (s *Server) emitStatusLocked(j *job) {
	var pos any
	if p := s.queuePositionLocked(j); p > 0 {
		pos = p
	}
	s.notifyLocked(j, event{name: "status", data: map[string]any{"status": j.status, "queue_position": pos}, terminal: isTerminal(j.status)})
}

func (s *Server) setStatusLocked(j *job, status string) {
	j.status = status
	s.emitStatusLocked(j)
}

func (s *Server) setProgressLocked(j *job, p progressJSON) {
	if s.opts.FlatProgress && j.progress != nil && p.Value < 1 {
		return // progress stays where it started until the job is done
	}
	j.progress = &p
	s.notifyLocked(j, event{name: "progress", data: p})
}

// logLocked records a line the run printed, when the surface captures logs.
func (s *Server) logLocked(j *job, line string) {
	if !s.opts.LogsLink {
		return
	}
	j.logs.WriteString(line)
	j.logs.WriteByte('\n')
	s.notifyLocked(j, event{name: "log", data: map[string]any{"message": line}})
}

// removeFromQueueLocked takes j off the queue and tells the jobs behind it their new place.
func (s *Server) removeFromQueueLocked(j *job) {
	for i, q := range s.queue {
		if q != j {
			continue
		}
		s.queue = append(s.queue[:i], s.queue[i+1:]...)
		for _, behind := range s.queue[i:] {
			s.emitStatusLocked(behind)
		}
		return
	}
}

// finishLocked moves a job to a terminal status.
func (s *Server) finishLocked(j *job, status string, now time.Time) {
	j.completedAt = now
	j.expiresAt = now.Add(s.opts.Retention)
	j.cancel()
	s.setStatusLocked(j, status)
}

// expireIfDueLocked moves a job past its retention to expired and drops its outputs.
func (s *Server) expireIfDueLocked(j *job, now time.Time) {
	if j.status == statusExpired || now.Before(j.expiresAt) {
		return
	}
	s.removeFromQueueLocked(j)
	j.cancel()
	s.dropOutputsLocked(j)
	s.setStatusLocked(j, statusExpired)
}

func (s *Server) dropOutputsLocked(j *job) {
	for _, o := range j.outputs {
		delete(s.assets, o.assetID)
	}
	j.outputs = nil
}

// commitOutput stores data as an asset and adds it to the running job's outputs.
func (s *Server) commitOutput(j *job, nodeID, name, typ, contentType string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j.status != statusRunning && j.status != statusCanceling {
		return // expired or purged meanwhile
	}
	a := s.putAssetLocked(name, contentType, data, j.id, nodeID)
	o := &jobOutput{
		assetID:     a.id,
		nodeID:      nodeID,
		name:        name,
		typ:         typ,
		contentType: contentType,
		size:        int64(len(data)),
		hash:        a.hash,
		urlExpires:  s.urlExpiry(s.now()),
	}
	j.outputs = append(j.outputs, o)
	s.notifyLocked(j, event{name: "output", output: o})
	s.logLocked(j, fmt.Sprintf("saved %s (%d bytes)", name, len(data)))
}

// ---- execution ----

// weight is a node's share of progress: its sampler steps, else 1.
func weight(c *nodeClass, inputs map[string]any) int {
	if c.StepsInput != "" {
		if n, ok := inputs[c.StepsInput].(float64); ok && n >= 1 {
			return int(n)
		}
	}
	return 1
}

func strPtr(v string) *string { return &v }
func intPtr(v int) *int       { return &v }

// execute runs a job that was just moved to running.
func (s *Server) execute(j *job) {
	x := newExecution(s, j)
	s.mu.Lock()
	s.setProgressLocked(j, x.progress(0, 0, "", "", 0, 0, "starting"))
	s.mu.Unlock()
	for i, id := range x.order {
		if !x.executeNode(i, id) {
			return
		}
	}
	x.finish()
}

// execution is the bookkeeping of one running job: its nodes in order, the work units each
// weighs (progress.value is the share of units done), and the values computed so far.
type execution struct {
	s       *Server
	j       *job
	order   []string
	weights []int
	total   int // units of the whole job
	done    int // units of the nodes finished
	values  map[string][]any
}

func newExecution(s *Server, j *job) *execution {
	x := &execution{s: s, j: j, order: executionOrder(j.workflow), values: map[string][]any{}}
	x.weights = make([]int, len(x.order))
	for i, id := range x.order {
		class, inputs, _ := nodeOf(j.workflow[id])
		x.weights[i] = weight(nodeClasses[class], inputs)
		x.total += x.weights[i]
	}
	return x
}

func (x *execution) progress(nodesDone int, units float64, node, class string, step, steps int, msg string) progressJSON {
	p := progressJSON{NodesDone: nodesDone, NodesTotal: len(x.order), Message: strPtr(msg)}
	p.Value = min(1, units/float64(max(x.total, 1)))
	if node != "" {
		p.CurrentNode, p.CurrentNodeClass = strPtr(node), strPtr(class)
	}
	if steps > 0 {
		p.Step, p.Steps = intPtr(step), intPtr(steps)
	}
	return p
}

// executeNode runs the i-th node; it returns false when the job ended with it (canceled, or
// failed as FailNode asked or the node itself did).
func (x *execution) executeNode(i int, id string) bool {
	s, j, ctx := x.s, x.j, x.j.ctx
	className, rawInputs, _ := nodeOf(j.workflow[id])
	c := nodeClasses[className]
	s.mu.Lock()
	s.setProgressLocked(j, x.progress(i, float64(x.done), id, className, 0, 0, "executing "+className))
	s.logLocked(j, fmt.Sprintf("executing node %s (%s)", id, className))
	failure, mustFail := s.nodeFail[className]
	s.mu.Unlock()

	if s.sleep(ctx, s.opts.NodeDuration) != nil {
		s.endCanceled(j)
		return false
	}
	if mustFail {
		s.endFailed(j, id, className, failure.Code, failure.Message, "")
		return false
	}
	in := resolveInputs(c, rawInputs, x.values)
	if c.StepsInput != "" { // a linked step count is only known now
		w := max(asInt(in[c.StepsInput]), 1)
		x.total += w - x.weights[i]
		x.weights[i] = w
	}
	run := &nodeRun{s: s, j: j, nodeID: id, class: c}
	base := x.done
	run.step = func(step, steps int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if j.status == statusRunning {
			s.setProgressLocked(j, x.progress(i, float64(base+step), id, className, step, steps, fmt.Sprintf("step %d/%d", step, steps)))
		}
	}
	run.sleepStep = func(ctx context.Context) error { return s.sleep(ctx, s.opts.StepDuration) }
	outs, stack, err := runNode(ctx, c, run, in)
	if ctx.Err() != nil {
		s.endCanceled(j)
		return false
	}
	if err != nil {
		s.endFailed(j, id, className, "node_execution_error", err.Error(), stack)
		return false
	}
	x.values[id] = outs
	x.done += x.weights[i]
	return true
}

// finish ends a job whose nodes all ran: succeeded, or canceled when the cancel came after
// the last node.
func (x *execution) finish() {
	s, j := x.s, x.j
	s.mu.Lock()
	defer s.mu.Unlock()
	if j.status != statusRunning && j.status != statusCanceling {
		return
	}
	now := s.now()
	if j.status == statusCanceling {
		s.logLocked(j, "canceled")
		s.finishLocked(j, statusCanceled, now)
		return
	}
	s.setProgressLocked(j, x.progress(len(x.order), float64(x.total), "", "", 0, 0, "done"))
	s.logLocked(j, fmt.Sprintf("Prompt executed in %.2f seconds", now.Sub(j.startedAt).Seconds()))
	s.finishLocked(j, statusSucceeded, now)
}

// runNode calls a node, turning a panic into an error with its stack.
func runNode(ctx context.Context, c *nodeClass, x *nodeRun, in map[string]any) (outs []any, stack string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err, stack = fmt.Errorf("%v", p), string(debug.Stack())
		}
	}()
	outs, err = c.run(ctx, x, in)
	return outs, "", err
}

// resolveInputs replaces links by upstream values and fills defaults.
func resolveInputs(c *nodeClass, raw map[string]any, values map[string][]any) map[string]any {
	in := map[string]any{}
	for _, spec := range c.Inputs {
		v, present := raw[spec.Name]
		if l, ok := asLink(v); ok {
			v = values[l.node][l.slot]
		} else if !present {
			v = spec.Default
		}
		in[spec.Name] = v
	}
	return in
}

func (s *Server) endCanceled(j *job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j.status == statusRunning || j.status == statusCanceling {
		s.logLocked(j, "canceled")
		s.finishLocked(j, statusCanceled, s.now())
	}
}

func (s *Server) endFailed(j *job, nodeID, class, code, message, stack string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j.status != statusRunning && j.status != statusCanceling {
		return
	}
	tb := traceback(nodeID, class, message, stack)
	j.err = &jobError{Code: code, Message: message, NodeID: strPtr(nodeID), ClassType: strPtr(class), Traceback: strPtr(tb)}
	for _, line := range strings.Split(strings.TrimRight(tb, "\n"), "\n") {
		s.logLocked(j, line)
	}
	s.finishLocked(j, statusFailed, s.now())
}

// traceback renders an engine-style, multi-line traceback.
func traceback(nodeID, class, message, stack string) string {
	var b strings.Builder
	b.WriteString("Traceback (most recent call last):\n")
	b.WriteString("  File \"execution.py\", line 327, in execute\n")
	b.WriteString("    output_data, output_ui = get_output_data(obj, input_data_all)\n")
	fmt.Fprintf(&b, "  File \"nodes.py\", line 1, in %s (node %s)\n", class, nodeID)
	b.WriteString("    return getattr(obj, func)(**inputs)\n")
	if stack != "" {
		b.WriteString(stack)
		if !strings.HasSuffix(stack, "\n") {
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "RuntimeError: %s\n", message)
	return b.String()
}

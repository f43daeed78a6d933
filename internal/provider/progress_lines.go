package provider

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/action"

	"github.com/svc-org/terraform-provider-svc/internal/client"
)

// maxProgressText bounds each value a service record puts into a progress line (a node id, a
// class, a message): Terraform prints every line on the terminal.
const maxProgressText = 200

// progressLines sends an action's progress to Terraform, which prints each message as its own
// line as it arrives. A line equal to the one before is not sent again: a wait reads the job
// on every poll, and only a change of what the line says (status, queue position, node, class,
// step) is news.
type progressLines struct {
	send func(action.InvokeProgressEvent)
	last string
}

func newProgressLines(resp *action.InvokeResponse) *progressLines {
	send := resp.SendProgress
	if send == nil { // a response built outside the framework (unit tests) has no sink
		send = func(action.InvokeProgressEvent) {}
	}
	return &progressLines{send: send}
}

func (p *progressLines) say(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if line == p.last {
		return
	}
	p.last = line
	p.send(action.InvokeProgressEvent{Message: line})
}

// job says where j stands while it is not over: queued (and where in the queue), running (the
// node, its class, the sampler step, how far the whole job is), canceling.
func (p *progressLines) job(j *client.Job) {
	switch j.Status {
	case client.JobQueued:
		if j.QueuePosition != nil {
			p.say("job %s queued, position %d", j.ID, *j.QueuePosition)
			return
		}
		p.say("job %s queued", j.ID)
	case client.JobRunning:
		p.say("job %s running%s", j.ID, runningDetail(j.Progress))
	case client.JobCanceling:
		p.say("job %s canceling", j.ID)
	}
}

// runningDetail is what a progress snapshot says: node "4" (KSampler), step 3/20, 2/5 nodes, 40%.
func runningDetail(pr *client.Progress) string {
	if pr == nil {
		return ""
	}
	var parts []string
	if pr.CurrentNode != nil {
		node := fmt.Sprintf("node %q", progressText(*pr.CurrentNode))
		if pr.CurrentNodeClass != nil {
			node += fmt.Sprintf(" (%s)", progressText(*pr.CurrentNodeClass))
		}
		parts = append(parts, node)
	}
	if pr.Step != nil && pr.Steps != nil {
		parts = append(parts, fmt.Sprintf("step %d/%d", *pr.Step, *pr.Steps))
	}
	if pr.NodesTotal > 0 {
		parts = append(parts, fmt.Sprintf("%d/%d nodes", pr.NodesDone, pr.NodesTotal))
	}
	parts = append(parts, fmt.Sprintf("%.0f%%", pr.Value*100))
	line := strings.Join(parts, ", ")
	// A message that only repeats what the line says already (such as "step 2/8") adds nothing.
	if pr.Message != nil {
		if msg := progressText(*pr.Message); msg != "" && !strings.Contains(line, msg) {
			line += ", " + msg
		}
	}
	return ": " + line
}

// end says how j ended and how long the wait for it took; a failure names node, class and
// message, as svc_job's error does.
func (p *progressLines) end(j *client.Job, took time.Duration) {
	took = took.Round(100 * time.Millisecond)
	line := fmt.Sprintf("job %s %s after %s", j.ID, j.Status, took)
	if e := j.Error; e != nil && j.Status != client.JobSucceeded {
		line += ": " + progressText(jobErrorLine(e))
	}
	if j.Status == client.JobSucceeded {
		line += fmt.Sprintf(", %d outputs", len(j.Outputs))
	}
	p.say("%s", line)
}

// jobErrorLine is a job's error on one line: node "4" (SaveImage) raised code: message.
func jobErrorLine(e *client.JobError) string {
	var b strings.Builder
	if e.NodeID != nil || e.ClassType != nil {
		fmt.Fprintf(&b, "node %q (%s) raised ", derefOrUnknown(e.NodeID), derefOrUnknown(e.ClassType))
	}
	fmt.Fprintf(&b, "%s: %s", e.Code, e.Message)
	return b.String()
}

// progressText is s from a service record, on one line and bounded.
func progressText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxProgressText {
		return s
	}
	cut := maxProgressText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

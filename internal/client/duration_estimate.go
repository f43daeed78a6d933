package client

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"time"
)

const (
	// estimateSamples is how many recent run times of one workflow shape are kept.
	estimateSamples = 16
	// estimateMinSamples is how many finished jobs of a shape it takes before their run time is
	// trusted: one job may be an outlier.
	estimateMinSamples = 2
	// estimateSpread bounds how far the kept run times may lie from their median (as a fraction
	// of it) for the median to be used: jobs of one shape that do not take about as long as
	// each other (different step counts, different inputs) say nothing about the next one.
	estimateSpread = 0.25
)

// DurationEstimator learns how long jobs run, per workflow shape, from the jobs that finished.
// One estimator serves every wait of one client user (a provider instance), so the later jobs
// of a batch are polled near their likely end instead of on a blind schedule. It is safe for
// concurrent use.
type DurationEstimator struct {
	mu      sync.Mutex
	byShape map[string][]time.Duration // most recent last
	// waiting holds, by shape, the waits under way (batchSeat) and which of them probes.
	waiting map[string]*shapeWaits
	// runningEnds holds the likely end of every job of the batch that runs, by seat (zero:
	// unknown).
	runningEnds map[int]time.Time
	nextSeat    int
}

// NewDurationEstimator returns an estimator that knows nothing yet.
func NewDurationEstimator() *DurationEstimator {
	return &DurationEstimator{byShape: map[string][]time.Duration{}, waiting: map[string]*shapeWaits{},
		runningEnds: map[int]time.Time{}}
}

// learn records the run time of a job of the given shape if it succeeded and its record says
// how long it ran (metrics.execution_ms, else completed_at - started_at). Failed and canceled
// jobs end early and teach nothing.
func (e *DurationEstimator) learn(shape string, job *Job) {
	if e == nil || shape == "" || job == nil || job.Status != JobSucceeded {
		return
	}
	d, ok := executionTime(job)
	if !ok {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byShape[shape] = append(e.byShape[shape], d)
	if n := len(e.byShape[shape]); n > estimateSamples {
		e.byShape[shape] = e.byShape[shape][n-estimateSamples:]
	}
	if len(e.byShape[shape]) == 1 {
		e.waiting[shape].firstRunTimeLocked()
	}
}

// firstRunTime returns the longest run time of the shape while too few jobs of it have finished
// to trust them (at least one, fewer than estimateMinSamples).
func (e *DurationEstimator) firstRunTime(shape string) (time.Duration, bool) {
	if e == nil || shape == "" {
		return 0, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	samples := e.byShape[shape]
	if len(samples) == 0 || len(samples) >= estimateMinSamples {
		return 0, false
	}
	return slices.Max(samples), true
}

// runTimes returns the median and a late run time (the ninth decile, at most the longest) of
// the recent run times of the shape, when there are enough of them and they agree. Reading a
// job once after the late run time finds nearly every job finished at the first read, where
// reading after the median finds half of them still running and costs those a second read.
func (e *DurationEstimator) runTimes(shape string) (median, late time.Duration, ok bool) {
	return agreeingRunTimes(e.sortedRunTimes(shape))
}

// agreeingRunTimes is runTimes for the given run times, sorted shortest first.
func agreeingRunTimes(samples []time.Duration) (median, late time.Duration, ok bool) {
	if len(samples) < estimateMinSamples {
		return 0, 0, false
	}
	median = samples[len(samples)/2]
	limit := time.Duration(float64(median) * estimateSpread)
	if samples[len(samples)-1]-median > limit || median-samples[0] > limit {
		return 0, 0, false
	}
	return median, samples[len(samples)*9/10], true
}

// spread returns an early run time, the median and a late one (the first decile, the median,
// the ninth decile) of the recent run times of the shape, when there are enough of them but
// they do not agree (runTimes says nothing): they still tell when a job of the shape is
// unlikely to have ended yet, and how closely to look after that.
func (e *DurationEstimator) spread(shape string) (early, median, late time.Duration, ok bool) {
	samples := e.sortedRunTimes(shape) // one snapshot, judged and read
	if _, _, agree := agreeingRunTimes(samples); agree || len(samples) < estimateMinSamples {
		return 0, 0, 0, false
	}
	return samples[len(samples)/10], samples[len(samples)/2], samples[len(samples)*9/10], true
}

// sortedRunTimes returns the recent run times of the shape, shortest first.
func (e *DurationEstimator) sortedRunTimes(shape string) []time.Duration {
	if e == nil || shape == "" {
		return nil
	}
	e.mu.Lock()
	samples := slices.Clone(e.byShape[shape])
	e.mu.Unlock()
	slices.Sort(samples)
	return samples
}

// executionTime is how long a finished job ran, from its metrics or its timestamps.
func executionTime(job *Job) (time.Duration, bool) {
	if ms := job.Metrics["execution_ms"]; ms != nil && *ms > 0 {
		return time.Duration(*ms) * time.Millisecond, true
	}
	start, okStart := parseJobTime(job.StartedAt)
	end, okEnd := parseJobTime(job.CompletedAt)
	if !okStart || !okEnd || !end.After(start) {
		return 0, false
	}
	return end.Sub(start), true
}

func parseJobTime(s *string) (time.Time, bool) {
	if s == nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	return t, err == nil
}

// WorkflowShape names the structure of a workflow: its node ids, class types, which inputs are
// links to which node outputs, and which are literal values (by name, not by value). Jobs of one
// batch that differ only in seeds, prompts or file names share a shape. It returns "" for a
// workflow that is not an object of nodes.
func WorkflowShape(workflow []byte) string {
	var nodes map[string]struct {
		ClassType string                     `json:"class_type"`
		Inputs    map[string]json.RawMessage `json:"inputs"`
	}
	if err := json.Unmarshal(workflow, &nodes); err != nil || len(nodes) == 0 {
		return ""
	}
	h := sha256.New()
	for _, id := range slices.Sorted(maps.Keys(nodes)) {
		n := nodes[id]
		writeField(h, id, n.ClassType)
		for _, name := range slices.Sorted(maps.Keys(n.Inputs)) {
			writeField(h, name, linkTarget(n.Inputs[name]))
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// linkTarget is the text of an input that links to another node's output (["id", index]), and
// "" for a literal value, whose content does not change the shape.
func linkTarget(raw json.RawMessage) string {
	var link []json.RawMessage
	if json.Unmarshal(raw, &link) != nil || len(link) != 2 {
		return ""
	}
	var id string
	var index int
	if json.Unmarshal(link[0], &id) != nil || json.Unmarshal(link[1], &index) != nil {
		return ""
	}
	return string(raw)
}

func writeField(h interface{ Write([]byte) (int, error) }, parts ...string) {
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
}

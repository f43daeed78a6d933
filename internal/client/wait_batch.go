package client

import (
	"slices"
	"time"
)

// Waiting on many jobs with one engine (a batch's rows, or the svc_job resources of one apply):
// share one *DurationEstimator (NewDurationEstimator, one per provider instance or batch) and
// call WaitJob for each job, from as many goroutines as jobs are in flight, with
//
//	WaitOptions{Durations: e, Shape: WorkflowShape(workflow), OnUpdate: ...}
//
// Each WaitJob runs on the one wait loop; through e the waits of one shape form a batch: one
// probes while the others keep a safety net, the first end tells the others when theirs will,
// queued jobs plan from when the running ones will end, and a 429 with Retry-After on any read
// holds the reads of every wait of the client (Client.holdReads). Event streams are used where
// served (one refused stream tells every later wait to poll). WaitJob returns the last record
// with any error, so a row's id and status are never lost.

// batchSeat is one wait's place among the waits that share a DurationEstimator (the jobs of one
// batch). Through it a wait learns whether it probes its workflow shape or follows the probe,
// hears news of its shape between reads (bell), and tells the other waits when its own job
// will likely end, so that a queued job can tell when it will likely start. A nil seat does
// nothing.
type batchSeat struct {
	e     *DurationEstimator
	id    int
	shape string
	// bell rings (a buffered channel of one) when the seat has news between reads: the shape's
	// first run time, or the probe handed to it.
	bell chan struct{}
}

// shapeWaits are the waits under way on jobs of one shape. While no job of the shape has
// finished, one of them probes: it is polled on the regular schedule, and its end teaches the
// others (the followers), which meanwhile keep only a slow safety net. Jobs of one batch that
// share a shape take about as long as each other, so the first to finish tells the others when
// to look.
type shapeWaits struct {
	seats []*batchSeat // in the order they joined
	probe *batchSeat   // nil once the shape has a run time, or when no wait is left to probe
	held  map[int]bool // seats that have probed: the probe is handed to each seat once
}

// join takes a seat for a wait on a job of the given shape; leave gives it back.
func (e *DurationEstimator) join(shape string) *batchSeat {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nextSeat++
	s := &batchSeat{e: e, id: e.nextSeat, shape: shape, bell: make(chan struct{}, 1)}
	if shape == "" {
		return s
	}
	w := e.waiting[shape]
	if w == nil {
		w = &shapeWaits{held: map[int]bool{}}
		e.waiting[shape] = w
	}
	w.seats = append(w.seats, s)
	if w.probe == nil && len(e.byShape[shape]) == 0 && !w.allHeld() {
		w.handTo(s)
	}
	return s
}

// leave ends the seat's wait. A probe that leaves before its shape has a run time (its job
// failed, or the wait ended) hands the probe on.
func (s *batchSeat) leave() {
	if s == nil {
		return
	}
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	delete(s.e.runningEnds, s.id)
	w := s.e.waiting[s.shape]
	if w == nil {
		return
	}
	w.seats = slices.DeleteFunc(w.seats, func(o *batchSeat) bool { return o == s })
	if len(w.seats) == 0 {
		delete(s.e.waiting, s.shape)
		return
	}
	if w.probe == s {
		w.probe = nil
		w.handOnLocked()
	}
}

// follows reports whether the seat's shape has no run time yet and another wait probes it.
func (s *batchSeat) follows() bool {
	if s == nil || s.shape == "" {
		return false
	}
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	w := s.e.waiting[s.shape]
	return w != nil && w.probe != nil && w.probe != s
}

// probeShare is how many times as often as a lone wait the seat's wait reads its job: 1, or,
// while it probes its shape for k followers that keep only a slow safety net, 1 + k/2: the
// followers give the probe half the reads they save, so the batch sees its first end, and
// from it every end, sooner, at no more reads per job than polling each job alone.
func (s *batchSeat) probeShare() float64 {
	if s == nil || s.shape == "" {
		return 1
	}
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	w := s.e.waiting[s.shape]
	if w == nil || w.probe != s {
		return 1
	}
	return 1 + float64(len(w.seats)-1)/2
}

// queuedWhileProbing is told that the seat's job was read still queued. A queued job cannot
// end before it runs, so while it probes, the batch learns nothing: the probe goes to the next
// wait of the shape that has not probed yet (each once, so a batch that is all queued hands it
// around at most once), whose bell rings.
func (s *batchSeat) queuedWhileProbing() {
	if s == nil {
		return
	}
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	w := s.e.waiting[s.shape]
	if w == nil || w.probe != s || w.allHeld() {
		return
	}
	w.probe = nil
	w.handOnLocked()
}

// handOnLocked hands the probe to the first seat that has not held it; e.mu must be held.
func (w *shapeWaits) handOnLocked() {
	for _, o := range w.seats {
		if !w.held[o.id] {
			w.handTo(o)
			o.ring()
			return
		}
	}
}

func (w *shapeWaits) handTo(s *batchSeat) {
	w.probe = s
	w.held[s.id] = true
}

func (w *shapeWaits) allHeld() bool {
	for _, o := range w.seats {
		if !w.held[o.id] {
			return false
		}
	}
	return true
}

// firstRunTimeLocked ends the probing of a shape whose first job has finished and rings every
// wait of it; e.mu must be held.
func (w *shapeWaits) firstRunTimeLocked() {
	if w == nil {
		return
	}
	w.probe = nil
	for _, o := range w.seats {
		o.ring()
	}
}

// ring tells the seat's wait it has news; a bell already rung stays rung.
func (s *batchSeat) ring() {
	select {
	case s.bell <- struct{}{}:
	default:
	}
}

// running tells the batch that the seat's job runs and will likely end at end (zero: unknown).
func (s *batchSeat) running(end time.Time) {
	if s == nil {
		return
	}
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	s.e.runningEnds[s.id] = end
}

// notRunning tells the batch that the seat's job is not running (queued, or over).
func (s *batchSeat) notRunning() {
	if s == nil {
		return
	}
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	delete(s.e.runningEnds, s.id)
}

// othersEnds returns the likely ends of the other jobs of the batch that run (zero: unknown).
func (s *batchSeat) othersEnds() []time.Time {
	if s == nil {
		return nil
	}
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	ends := make([]time.Time, 0, len(s.e.runningEnds))
	for id, end := range s.e.runningEnds {
		if id != s.id {
			ends = append(ends, end)
		}
	}
	return ends
}

// likelyStart is when a job at the given place in the queue will likely start, given the likely
// ends of the batch's running jobs. The queue is served in order as running jobs end, so the
// job at place p (1 the next to start; 0 and an absent place are taken as 1) starts when the
// p-th of them ends. A job whose end is unknown, or past, could end now, so it counts as ending
// now; and when fewer of the batch's jobs run than the place says, the slots ahead are taken by
// jobs it cannot see, which could end at any moment: the job may start now. Either way the
// guess errs early (one more read), not late.
func likelyStart(now time.Time, position *int64, runningEnds []time.Time) time.Time {
	place := 1
	if position != nil && *position > 1 {
		place = int(min(*position, int64(len(runningEnds)+1)))
	}
	if place > len(runningEnds) {
		return now
	}
	ends := make([]time.Time, len(runningEnds))
	for i, end := range runningEnds {
		ends[i] = later(end, now)
	}
	slices.SortFunc(ends, time.Time.Compare)
	return ends[place-1]
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

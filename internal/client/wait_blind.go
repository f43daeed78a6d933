package client

import "time"

// blindPlan places the next read of a wait whose end nothing foretells (no event stream, no
// progress that moves, no run time of its shape to go on). The rule:
//
//   - Budget. It keeps the request budget of a fixed poll at period P that starts at the
//     submission: the wait's (n+1)-th read comes no sooner than n periods after the wait began.
//     Then, wherever the run ends (just after a read is the worst case), the read that sees it is
//     at most the one such a poll would send plus one, so the wait sends at most run/P + 2
//     reads besides the submission and the event-stream probe.
//   - Marks. Within that budget, reads fall on marks of the run's own time, counted from its
//     started_at (clamped to our clock: never later than the read that first saw it running;
//     from the wait's start while it has not started): P/2, 3P/2, 2P, 3P, ..., 20P; past 20
//     periods a mark every twentieth of the run so far. Each read comes a margin after its mark
//     (blindMargin: a fixed part for the service's start-up and the read's own latency, and a
//     twenty-fourth of the mark for a run's overheads), so a run meant to end on a mark is
//     seen soon after, not a period later.
//   - Why these marks. Run-relative, a read every period sees a run of whole periods at once and
//     any other within a period. Reads at P/2 (the first, which also learns started_at) and at
//     2P sit on the budget's floors (0 and 2P); the second read's floor is P, so it has half a
//     period to spare. At 3P/2 it sees every end from P to 2P within P/2 (a span of P, where a
//     read at P would do so for the ends from P/2 to P, a span of P/2). Past 20 periods a
//     twentieth of the run is more than P: every end is still seen within 5 % of its run, at
//     fewer reads.
//   - Pace. No read comes sooner than floor (PollMin) after the last, nor sooner than the
//     service's Retry-After on it: a mark that the Retry-After passes is read when it allows,
//     and the next read aims at the next mark. (The job wait also stretches a period shorter
//     than the Retry-After to it, so that a paced wait stays on marks.)
//
// No blind schedule sees every end within less than P/2 at this budget: that needs a read every
// P/2, twice as many. What the marks buy: a run meant to last a whole number of periods (or
// half a period, or one and a half) is seen within the margin; any run within a period and a
// twenty-fourth (the margins grow by that much from one mark to the next), the first gap also
// by the service's start-up; a fixed poll from the submission sees runs within a period too,
// but a whole-period run a hair after a read, so a period late.
type blindPlan struct {
	period    time.Duration // P: the fixed poll whose request budget is kept
	floor     time.Duration // least time between two reads
	began     time.Time     // when the wait began
	origin    time.Time     // where the marks count from: the run's start, else began
	reads     int           // reads the wait has made
	notBefore time.Time     // what the service's Retry-After on the last read allows
}

const (
	// blindMarginFixed covers the service's start-up (a job starts some milliseconds after it
	// is submitted, and its started_at is stamped then) and the time a read takes to reach it.
	blindMarginFixed = 100 * time.Millisecond
	// blindMarginShare: a run meant to last a whole number of seconds ends a little later (its
	// steps' overheads add up: 2 to 4 % on a loaded machine); a read comes a twenty-fourth of
	// its mark after it. That keeps a run that ends right on its mark within the lateness
	// bound too: 100 ms + t/24 is within max(1 s, t/20) at every t.
	blindMarginShare = 24
	// blindAlignedPeriods is how many periods the marks keep one period apart; past that a
	// twentieth of the run (5 %) is longer than a period.
	blindAlignedPeriods = 20
)

// blindMargin is how long after a mark its read comes.
func blindMargin(mark time.Duration) time.Duration { return blindMarginFixed + mark/blindMarginShare }

// wait returns how long to wait, from now, before the next read: at the first mark whose read
// time lies more than a quarter period ahead (so the mark just read, or one the wait's own
// start-up skews its first read past, is not read twice), unless a bound says later.
func (b blindPlan) wait(now time.Time) time.Duration {
	at := b.origin.Add(b.nextMark(now.Sub(b.origin) + b.period/4))
	for _, bound := range []time.Time{now.Add(b.floor), b.notBefore, b.began.Add(time.Duration(b.reads) * b.period)} {
		at = later(at, bound)
	}
	return at.Sub(now)
}

// nextMark is the read time (a mark plus its margin, from the origin) of the first mark whose
// read is still to come at elapsed.
func (b blindPlan) nextMark(elapsed time.Duration) time.Duration {
	p := max(b.period, time.Millisecond)
	for _, m := range []time.Duration{p / 2, 3 * p / 2} {
		if m+blindMargin(m) > elapsed {
			return m + blindMargin(m)
		}
	}
	aligned := blindAlignedPeriods * p
	if elapsed < aligned+blindMargin(aligned) {
		// The first whole period whose read time lies ahead (2P at least: the marks before
		// it have passed), searched from the period before the one elapsed names.
		periods := max(int64((elapsed-blindMarginFixed)/p)-1, 1)
		for m := time.Duration(periods) * p; ; m += p {
			if m+blindMargin(m) > elapsed {
				return m + blindMargin(m)
			}
		}
	}
	m := aligned
	for m+blindMargin(m) <= elapsed {
		m += m / blindAlignedPeriods
	}
	return m + blindMargin(m)
}

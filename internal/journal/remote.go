package journal

// A journal in a bucket (s3://bucket/prefix?...), for runners that do not keep their disk: the
// next runner, anywhere, reads it. Under <prefix>/journal/:
//
//   - seg/<sequence, 20 digits>: one object per change, its lines as JSON lines after a header
//     line naming the write. A change is durable once its PUT completed. Each change writes the
//     slot after the last one its writer read, only if that slot is free (If-None-Match: *), so
//     of two writers of one slot exactly one wins and the other reads the winner's lines and runs
//     its change again on them: the free next slot is the journal's one lock, and the slots are
//     dense (a writer never skips one).
//   - a compaction writes every wanted entry into the next slot as a snapshot (its header says
//     so: a reader forgets what it read before it) and then deletes the slots below. A reader
//     that meets a missing slot (deleted while it read) reads again from the start.
//   - owners/<owner>: each process's lease, rewritten every renewEvery with a count and an
//     expiry Lease ahead. A claim is honoured while its owner's lease lives: not expired, by the
//     owner's clock nor by the reader's since it first saw it unchanged; a lease that was seen
//     renewed is alive. Open waits until the lease of each claim's owner has been seen renewed
//     or has ended (awaitLeases): a run killed a moment ago cannot be told from a live one
//     sooner, and submitting its entries anew would run them twice. A run whose claims appear
//     after this one opened is honoured while its lease is unexpired.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/svc-org/terraform-provider-svc/internal/bucket"
)

// Lease is how long the claims of a process on a bucket journal outlive its last renewal: a run
// after a runner was killed adopts the dead run's entries at most this long after the kill.
const Lease = 30 * time.Second

const (
	// renewEvery is how often a process renews its lease: several renewals fit in a lease, so a
	// late one or two do not let another run adopt a live run's entries.
	renewEvery = Lease / 6
	// segmentLimit is the largest segment read (a change of 200 rows is about 60 KB).
	segmentLimit = 64 << 20
	// compactAfter is how many slots since the last snapshot make Open compact, and a change
	// too once they hold more bytes than a snapshot would (entryBytes an entry); compactDuring
	// makes a change compact whatever their size, so that a fresh runner reads few slots.
	compactAfter  = 64
	compactDuring = 256
	entryBytes    = 200
	// listPage is the most keys one listing asks for.
	listPage = 1000
	// rereads is how often a read starts again when compactions keep deleting what it lists.
	rereads = 5
)

// Header ops of a segment.
const (
	opSegment  op = "segment"  // a change
	opSnapshot op = "snapshot" // every wanted entry: what was read before is forgotten
)

// remoteOptions are what tests change of a bucket journal.
type remoteOptions struct {
	now        func() time.Time
	sleep      func(time.Duration)
	renewEvery time.Duration // 0: renewEvery; < 0: never (a test renews by hand)
}

// remoteLog is the bucket side of a journal.
type remoteLog struct {
	store *bucket.Store
	base  string // the journal's key prefix, ending in "/"

	lastKey    string // the last slot read
	lastSeq    uint64
	since      int   // slots read since the last snapshot (counting it)
	bytesSince int64 // their size
	stale      bool  // slots below the last snapshot are still there
	headless   bool  // the first slot read was not the first written, and no snapshot followed yet
	// mine is the header key of the write in flight; seenMine whether a read met it.
	mine     string
	seenMine bool

	leases map[string]*leaseSeen
	sleep  func(time.Duration) // between two looks at the leases at Open

	// Group commit: changes queue while one writer (holding commitMu) writes.
	commitMu sync.Mutex
	queueMu  sync.Mutex
	queue    []*waiter

	renewing sync.WaitGroup
	stop     chan struct{}
	renewed  atomic.Uint64 // this process's renewals
}

// leaseSeen is what a process saw of another's lease.
type leaseSeen struct {
	count      uint64
	firstSeen  time.Time // when it was first seen at count, by this process's clock
	aliveUntil time.Time // seen renewed: alive until then
	dead       bool
}

// lease is the content of an owner's lease object.
type lease struct {
	Count   uint64    `json:"count"`
	Expires time.Time `json:"expires"`
	PID     int       `json:"pid"`
	Host    string    `json:"host,omitempty"`
}

func (r *remoteLog) segKey(seq uint64) string { return r.base + "seg/" + fmt.Sprintf("%020d", seq) }
func (r *remoteLog) leaseKey(owner string) string {
	return r.base + ownersName + "/" + owner
}

// newRemote opens the bucket of raw (no request yet).
func newRemote(raw string, opts remoteOptions) (*Journal, error) {
	loc, err := bucket.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("journal %w", err)
	}
	store, err := bucket.Open(context.Background(), loc)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", raw, err)
	}
	if opts.sleep == nil {
		opts.sleep = time.Sleep
	}
	j := &Journal{
		dir: raw, now: opts.now,
		remote: &remoteLog{store: store, base: loc.Key("journal") + "/", leases: map[string]*leaseSeen{}, sleep: opts.sleep},
	}
	j.reset()
	return j, nil
}

// checkRemote checks a bucket journal: the bucket is there and the credentials may use it, an
// object can be written and deleted there, and the journal reads.
func checkRemote(raw string) error {
	j, err := newRemote(raw, remoteOptions{now: time.Now})
	if err != nil {
		return err
	}
	defer j.remote.store.Close()
	ctx := context.Background()
	if err := j.remote.store.Check(ctx); err != nil {
		return fmt.Errorf("journal %s: %w", raw, err)
	}
	probe := j.remote.leaseKey("check-" + uuid.NewString())
	if err := j.remote.store.PutSmall(ctx, probe, []byte("{}")); err != nil {
		return fmt.Errorf("journal %s: cannot be written: %w", raw, err)
	}
	if err := j.remote.store.Delete(ctx, []string{probe}); err != nil {
		return fmt.Errorf("journal %s: %w", raw, err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.refreshRemote(ctx)
}

// openRemote opens a bucket journal: this process's lease is written (and renewed until Close),
// the journal read, and compacted when it grew.
func openRemote(raw string, opts remoteOptions) (*Journal, error) {
	j, err := newRemote(raw, opts)
	if err != nil {
		return nil, err
	}
	r := j.remote
	j.owner = uuid.NewString()
	if err := r.renew(j); err != nil {
		r.store.Close()
		return nil, err
	}
	every := opts.renewEvery
	if every == 0 {
		every = renewEvery
	}
	r.stop = make(chan struct{})
	if every > 0 {
		r.renewing.Add(1)
		go r.renewLoop(j, every)
	}
	j.mu.Lock()
	err = j.compactRemote(context.Background())
	if err == nil {
		err = j.awaitLeases(context.Background())
	}
	j.mu.Unlock()
	if err != nil {
		_ = j.closeRemote()
		return nil, err
	}
	return j, nil
}

// renew writes this process's lease, Lease ahead.
func (r *remoteLog) renew(j *Journal) error {
	host, _ := os.Hostname()
	b, _ := json.Marshal(lease{Count: r.renewed.Add(1), Expires: j.now().Add(Lease).UTC(), PID: os.Getpid(), Host: host})
	// A renewal late by more than two intervals is no use: the next one is under way by then.
	ctx, cancel := context.WithTimeout(context.Background(), 2*renewEvery)
	defer cancel()
	if err := r.store.PutSmall(ctx, r.leaseKey(j.owner), b); err != nil {
		return fmt.Errorf("journal %s: writing this process's lease: %w", j.dir, err)
	}
	return nil
}

// renewLoop renews the lease every interval until stop is closed. A failed renewal is tried
// again at the next tick: the lease lives Lease, several intervals.
func (r *remoteLog) renewLoop(j *Journal, every time.Duration) {
	defer r.renewing.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			_ = r.renew(j)
		}
	}
}

// stopRenewing stops the renewals (what a killed process does to its lease).
func (r *remoteLog) stopRenewing() {
	if r.stop != nil {
		close(r.stop)
		r.renewing.Wait()
		r.stop = nil
	}
}

// closeRemote ends this process's lease: its claims are released.
func (j *Journal) closeRemote() error {
	r := j.remote
	r.stopRenewing()
	err := r.store.Delete(context.Background(), []string{r.leaseKey(j.owner)})
	r.store.Close()
	if err != nil {
		return fmt.Errorf("journal %s: removing this process's lease: %w", j.dir, err)
	}
	return nil
}

// ownerGone reports whether the lease of owner ended, so that its claims are not honoured: the
// lease is gone (its process ended well) or expired (by the owner's clock, or unchanged for a
// Lease by this process's). A lease seen renewed is alive for two renewal intervals, then looked
// at again. Holding j.mu.
func (r *remoteLog) ownerGone(j *Journal, owner string) bool { return r.ownerGoneAsOf(j, owner, false) }

// ownerGoneAsOf is ownerGone; fresh reads the lease even when it was seen renewed lately.
func (r *remoteLog) ownerGoneAsOf(j *Journal, owner string, fresh bool) bool {
	now := j.now()
	seen := r.leases[owner]
	switch {
	case seen != nil && seen.dead:
		return true
	case seen != nil && !fresh && now.Before(seen.aliveUntil):
		return false
	}
	b, ok, err := r.store.GetSmall(context.Background(), r.leaseKey(owner), 4096)
	if err != nil {
		return false // unreadable for now: honoured
	}
	var l lease
	if !ok || json.Unmarshal(b, &l) != nil || !now.Before(l.Expires) {
		r.leases[owner] = &leaseSeen{dead: true}
		return true
	}
	switch {
	case seen == nil || l.Count != seen.count:
		// First seen, or renewed since: alive until a renewal is due twice over.
		r.leases[owner] = &leaseSeen{count: l.Count, firstSeen: now, aliveUntil: now.Add(2 * renewEvery)}
		return false
	case !now.Before(seen.firstSeen.Add(Lease)):
		seen.dead = true // unchanged for a lease by this process's clock
		return true
	}
	return false
}

// awaitLeases returns once the lease of every other process that claims an entry this run could
// adopt has been seen renewed (alive) or has ended, looking every renewEvery/2. A run killed a
// moment ago cannot be told from a live one sooner, and honouring its claims would have this run
// submit its entries anew, running them twice: so a fresh runner waits at most Lease after a
// kill. Holding j.mu (at Open, before this process adopts anything).
func (j *Journal) awaitLeases(ctx context.Context) error {
	r := j.remote
	decided := map[string]bool{}
	for {
		wait, looked := false, map[string]bool{}
		for _, key := range j.order {
			e := j.entries[key]
			if e == nil || e.handed || e.owner == "" || e.owner == j.owner || j.expired(e) || decided[e.owner] || looked[e.owner] {
				continue
			}
			looked[e.owner] = true
			if r.leaseDecided(j, e.owner) {
				decided[e.owner] = true
			} else {
				wait = true
			}
		}
		if !wait {
			return nil
		}
		j.mu.Unlock()
		r.sleep(renewEvery / 2)
		j.mu.Lock()
		if err := j.refreshRemote(ctx); err != nil {
			return err
		}
	}
}

// leaseDecided reports whether owner's lease has been seen renewed or has ended (ownerGone), as
// opposed to seen only unchanged and unexpired.
func (r *remoteLog) leaseDecided(j *Journal, owner string) bool {
	before := r.leases[owner]
	if r.ownerGoneAsOf(j, owner, true) {
		return true
	}
	after := r.leases[owner]
	return before != nil && after != before // a new look found another count: renewed
}

// changeRemote runs fn on the entries as the bucket holds them and writes the lines it returns
// into the next slot. Changes made while another is being written are written together, in one
// slot (group commit), so that a wave of submissions costs a few writes, not one each.
func (j *Journal) changeRemote(fn func() []line) error {
	r := j.remote
	w := &waiter{fn: fn, done: make(chan struct{})}
	r.queueMu.Lock()
	r.queue = append(r.queue, w)
	r.queueMu.Unlock()
	r.commitMu.Lock()
	defer r.commitMu.Unlock()
	select {
	case <-w.done: // written by the group of the writer before
		return w.err
	default:
	}
	r.queueMu.Lock()
	group := r.queue
	r.queue = nil
	r.queueMu.Unlock()
	err := j.commitGroup(group)
	for _, g := range group {
		g.err = err
		close(g.done)
	}
	return w.err
}

// waiter is a change waiting to be written.
type waiter struct {
	fn   func() []line
	err  error
	done chan struct{}
}

// commitGroup writes the lines of a group of changes into the next slot, each change run on the
// entries as the ones before it in the group left them. When another writer took the slot, the
// journal is read again from its start and the group run again.
func (j *Journal) commitGroup(group []*waiter) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	ctx := context.Background()
	r := j.remote
	for {
		if err := j.refreshRemote(ctx); err != nil {
			return err
		}
		var lines []line
		for _, g := range group {
			mine := g.fn()
			for _, l := range mine {
				b, _ := json.Marshal(l)
				_ = j.apply(b) // seen by the next change of the group; undone below if not written
			}
			lines = append(lines, mine...)
		}
		if len(lines) == 0 {
			return nil
		}
		seq := r.lastSeq + 1
		body, id := segment(opSegment, lines)
		err := r.store.PutNew(ctx, r.segKey(seq), body)
		if err != nil {
			// The entries hold lines not written (or not known to be): read everything again.
			j.forgetRemote()
		}
		if errors.Is(err, bucket.ErrTaken) {
			// Another writer's, or this one's whose answer was lost and whose retry found it.
			r.mine, r.seenMine = id, false
			err := j.refreshRemote(ctx)
			mine := r.seenMine
			r.mine = ""
			if err != nil || mine {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("journal %s: %w", j.dir, err)
		}
		r.lastSeq, r.lastKey = seq, r.segKey(seq)
		r.since++
		r.bytesSince += int64(len(body))
		if r.since >= compactDuring || r.since >= compactAfter && r.bytesSince >= int64(len(j.entries))*entryBytes {
			// Best effort: the change is written whatever becomes of the compaction, and the
			// next Open compacts what this one did not.
			_ = j.compactNow(ctx)
		}
		return nil
	}
}

// segment is the body of a slot: a header line of op under a fresh key, then lines.
func segment(o op, lines []line) (body []byte, id string) {
	id = uuid.NewString()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	_ = enc.Encode(line{Op: o, Entry: Entry{Key: id}})
	for _, l := range lines {
		_ = enc.Encode(l)
	}
	return buf.Bytes(), id
}

// errSlotGone marks a listed slot deleted before it was read (a compaction).
var errSlotGone = errors.New("a slot was deleted while it was read")

// refreshRemote reads the slots written since the last read, starting again from the first
// when a compaction deleted one on the way. Holding j.mu.
func (j *Journal) refreshRemote(ctx context.Context) error {
	for try := 0; ; try++ {
		err := j.readSlots(ctx)
		if !errors.Is(err, errSlotGone) || try == rereads {
			return err
		}
		j.forgetRemote()
	}
}

// forgetRemote forgets what was read, so that the next read starts from the first slot.
func (j *Journal) forgetRemote() {
	j.reset()
	r := j.remote
	r.lastKey, r.lastSeq, r.since, r.bytesSince, r.stale, r.headless = "", 0, 0, 0, false, false
}

// readSlots reads the slots after the last read, a page of keys at a time: what it holds is the
// entries, never the listing.
func (j *Journal) readSlots(ctx context.Context) error {
	r := j.remote
	prefix := r.base + "seg/"
	for {
		keys, more, err := r.store.ListPage(ctx, prefix, r.lastKey, listPage)
		if err != nil {
			return fmt.Errorf("journal %s: %w", j.dir, err)
		}
		for _, key := range keys {
			seq, err := strconv.ParseUint(strings.TrimPrefix(key, prefix), 10, 64)
			if err != nil {
				return fmt.Errorf("journal %s: %s is not a slot of the journal; move it away", j.dir, r.store.URL(key))
			}
			if err := j.readSlot(ctx, key, seq); err != nil {
				return err
			}
		}
		if !more {
			if r.headless {
				return fmt.Errorf("journal %s: the slots before %s are missing, and no snapshot follows; move the journal away (jobs it names may then run again)", j.dir, r.store.URL(r.lastKey))
			}
			return nil
		}
	}
}

// readSlot replays one slot. A slot that does not follow the last one read is fine only as a
// snapshot, which stands for everything before it (or when the slots before it are a
// compaction's leftovers, which a later snapshot supersedes: checked at the end of the read).
func (j *Journal) readSlot(ctx context.Context, key string, seq uint64) error {
	r := j.remote
	b, ok, err := r.store.GetSmall(ctx, key, segmentLimit)
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.dir, err)
	}
	if !ok {
		return errSlotGone
	}
	corrupt := func(why string) error {
		return fmt.Errorf("journal %s: %s %s; move it away (jobs it names may then run again)", j.dir, r.store.URL(key), why)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return corrupt("is not a slot of the journal (no header, or a last line without its newline)")
	}
	lines := bytes.Split(b[:len(b)-1], []byte("\n"))
	var head line
	if json.Unmarshal(lines[0], &head) != nil || head.Op != opSegment && head.Op != opSnapshot {
		return corrupt("has no header")
	}
	switch {
	case head.Op == opSnapshot:
		if r.lastKey != "" {
			r.stale = true
		}
		j.reset()
		r.since, r.bytesSince, r.headless = 0, 0, false
	case r.lastKey == "" && seq != 1:
		// The first slot read, after slots deleted: a compaction's leftovers, which a snapshot
		// further on must supersede.
		r.headless = true
	case r.lastKey != "" && seq != r.lastSeq+1:
		return corrupt(fmt.Sprintf("follows slot %d: the slots between are missing", r.lastSeq))
	}
	if head.Key == r.mine && r.mine != "" {
		r.seenMine = true
	}
	for i, l := range lines[1:] {
		if err := j.apply(l); err != nil {
			return corrupt(fmt.Sprintf("line %d: %v", i+2, err))
		}
	}
	r.lastKey, r.lastSeq = key, seq
	r.since++
	r.bytesSince += int64(len(b))
	return nil
}

// compactRemote reads the journal and, when compactAfter slots followed the last snapshot,
// writes a snapshot into the next slot; then it deletes the slots below the last snapshot.
// Holding j.mu.
func (j *Journal) compactRemote(ctx context.Context) error {
	r := j.remote
	if err := j.refreshRemote(ctx); err != nil {
		return err
	}
	if r.since >= compactAfter {
		return j.compactNow(ctx)
	}
	if !r.stale {
		return nil
	}
	return j.deleteBelow(ctx, r.lastSnapshotBound())
}

// compactNow writes every wanted entry into the next slot as a snapshot and deletes the slots
// below it. Holding j.mu, with the journal just read.
func (j *Journal) compactNow(ctx context.Context) error {
	r := j.remote
	body, _ := segment(opSnapshot, j.wanted())
	seq := r.lastSeq + 1
	err := r.store.PutNew(ctx, r.segKey(seq), body)
	if errors.Is(err, bucket.ErrTaken) {
		return nil // another writer was first: the next Open compacts
	}
	if err != nil {
		return fmt.Errorf("journal %s: compacting: %w", j.dir, err)
	}
	r.lastSeq, r.lastKey, r.since, r.bytesSince, r.stale = seq, r.segKey(seq), 1, int64(len(body)), true
	return j.deleteBelow(ctx, r.lastSnapshotBound())
}

// lastSnapshotBound is the key below which slots are superseded: the last snapshot read (the
// slots after it were read since, as r.since counts).
func (r *remoteLog) lastSnapshotBound() string {
	return r.segKey(r.lastSeq + 1 - uint64(r.since))
}

// deleteBelow deletes the slots whose keys sort before bound, a page at a time.
func (j *Journal) deleteBelow(ctx context.Context, bound string) error {
	r := j.remote
	prefix := r.base + "seg/"
	after := ""
	for {
		keys, more, err := r.store.ListPage(ctx, prefix, after, listPage)
		if err != nil {
			return fmt.Errorf("journal %s: compacting: %w", j.dir, err)
		}
		var doomed []string
		for _, k := range keys {
			if k >= bound {
				more = false
				break
			}
			doomed = append(doomed, k)
		}
		if err := r.store.Delete(ctx, doomed); err != nil {
			return fmt.Errorf("journal %s: compacting: %w", j.dir, err)
		}
		if !more || len(keys) == 0 {
			r.stale = false
			return nil
		}
		after = keys[len(keys)-1]
	}
}

// Package journal keeps a write-ahead record of submissions in a directory: before a submission
// leaves, its idempotency key and a digest of what it is for are on disk (fsync'd); when the
// answer comes, the id the service gave it is added. A run that died before the ids reached
// Terraform's state finds them here, so that the next run adopts what was submitted instead of
// submitting it again.
//
// The journal is one append-only file of JSON lines, journal.jsonl, in its directory. Every
// change takes lock (an flock on the file "lock") for the time of its read and append, so that
// several processes can share one journal. An entry a process submits or adopts is claimed by
// it: each process holds an flock on a file of its own under owners/ for as long as it lives,
// and a claim is honoured only while that lock is held, so two runs never adopt the same entry
// and a run that died (SIGKILL, OOM, a lost host) leaves its entries to the next.
package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/uuid"

	"github.com/svc-org/terraform-provider-svc/internal/atomicfile"
	"github.com/svc-org/terraform-provider-svc/internal/bucket"
)

// TTL is how long an entry is kept: the service keeps an idempotency key this long, so an entry
// older than that could only submit anew.
const TTL = 24 * time.Hour

const (
	logName    = "journal.jsonl"
	lockName   = "lock"
	ownersName = "owners"
)

// Entry is one submission: its idempotency key, what kind of submission it is, a digest of what
// decides the submission (never a secret), the group of submissions it belongs to ("" for none:
// the rows of one batch share one), the id the service answered with ("" until then) and when
// the entry was made.
type Entry struct {
	Key     string    `json:"key"`
	Kind    string    `json:"kind,omitempty"`
	Digest  string    `json:"digest,omitempty"`
	Group   string    `json:"group,omitempty"`
	ID      string    `json:"id,omitempty"`
	Created time.Time `json:"created,omitzero"`
}

// op names what a line of the log does to the entry of its key.
type op string

const (
	opPut      op = "put"      // a new entry, claimed by owner
	opID       op = "id"       // the service's id for it
	opClaim    op = "claim"    // adopted by owner
	opRelease  op = "release"  // no longer claimed: adoptable by the next run
	opReturned op = "returned" // its id went back to Terraform, which may not have saved it yet
	opHanded   op = "handed"   // its id is in Terraform's state: never adoptable again
	opRemove   op = "remove"   // gone (destroyed)
)

// line is one line of the log.
type line struct {
	Op op `json:"op"`
	Entry
	Owner string `json:"owner,omitempty"`
}

// entry is what the log says of one key.
type entry struct {
	Entry
	owner    string // the claiming process's owner token, "" when released
	returned bool
	handed   bool
}

// Journal is an open journal directory. Its methods are safe for concurrent use.
type Journal struct {
	dir   string
	now   func() time.Time
	owner string
	held  *flock.Flock // this process's owner file, locked while it lives

	// syncMu orders the syncs: a sync covers every line written before it began, so one sync
	// serves every change waiting for it (group commit). syncedTo is the end of the log the last
	// sync covered.
	syncMu   sync.Mutex
	syncedTo int64

	mu      sync.Mutex
	log     *os.File // journal.jsonl, opened for reading and appending
	offset  int64    // how much of log has been read
	entries map[string]*entry
	byID    map[string]string // the key of each id answered
	order   []string          // keys in the order they were put, so adoption is first in, first out

	// remote is the journal's bucket when it is one (see remote.go), nil for a directory.
	remote *remoteLog
	// byDigest and byGroup are the keys of each kind and digest, and of each kind and group, in
	// the order they were put (a subsequence of order): adoption looks up its digest's entries
	// instead of scanning every entry, so that 10,000 adoptions cost 10,000 look-ups, not 10,000
	// scans. A key removed stays listed until a look-up finds it gone and prunes it.
	byDigest map[string][]string
	byGroup  map[string][]string
}

// indexKey is the key of byDigest and byGroup.
func indexKey(kind, s string) string { return kind + "\x00" + s }

// Path is the journal's directory, for errors naming it.
func (j *Journal) Path() string { return j.dir }

// Place is where a journal lives, as its setting names it: a directory, or a bucket
// (s3://bucket/prefix?...). PlaceOf tells which once, where the setting is read.
type Place struct {
	name     string
	inBucket bool
}

// PlaceOf is the place s names.
func PlaceOf(s string) Place { return Place{name: s, inBucket: bucket.IsURL(s)} }

// String is the place as it was named.
func (p Place) String() string { return p.name }

// InBucket reports whether the place is a bucket.
func (p Place) InBucket() bool { return p.inBucket }

// Check reports whether p can hold a journal: the directory can be created and written, and a
// log already there reads. It changes nothing but creating the directory and an empty log.
func Check(p Place) error {
	if p.inBucket {
		return checkRemote(p.name)
	}
	dir := p.name
	j, err := openLog(dir, time.Now)
	if err != nil {
		return err
	}
	defer j.log.Close()
	return j.locked(func() error { return j.refresh() })
}

// Open opens (creating it when needed) the journal at p; now is its clock. The journal stays
// claimed by this process until Close.
func Open(p Place, now func() time.Time) (*Journal, error) {
	if p.inBucket {
		return openRemote(p.name, remoteOptions{now: now})
	}
	j, err := openLog(p.name, now)
	if err != nil {
		return nil, err
	}
	if err := j.takeOwnership(); err != nil {
		j.log.Close()
		return nil, err
	}
	if err := j.locked(j.compact); err != nil {
		_ = j.Close()
		return nil, err
	}
	return j, nil
}

func openLog(dir string, now func() time.Time) (*Journal, error) {
	if err := os.MkdirAll(filepath.Join(dir, ownersName), 0o755); err != nil {
		return nil, fmt.Errorf("journal %s: %w", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, logName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", dir, err)
	}
	j := &Journal{dir: dir, now: now, log: f}
	j.reset()
	return j, nil
}

// reset forgets what was read of the log.
func (j *Journal) reset() {
	j.offset, j.entries, j.byID, j.order = 0, map[string]*entry{}, map[string]string{}, nil
	j.byDigest, j.byGroup = map[string][]string{}, map[string][]string{}
}

// takeOwnership makes the owner file whose lock marks this process's claims as alive.
func (j *Journal) takeOwnership() error {
	j.owner = uuid.NewString()
	path := j.ownerPath(j.owner)
	// The pid is for people reading the directory; the lock is what says the owner lives.
	if err := os.WriteFile(path, fmt.Appendf(nil, "pid %d\n", os.Getpid()), 0o644); err != nil {
		return fmt.Errorf("journal %s: %w", j.dir, err)
	}
	held := fileLock(path, true)
	ok, err := held.TryLock()
	if err == nil && !ok {
		err = errOwnerTaken
	}
	if err != nil {
		return fmt.Errorf("journal %s: locking %s: %w", j.dir, path, err)
	}
	j.held = held
	return nil
}

func (j *Journal) ownerPath(owner string) string { return filepath.Join(j.dir, ownersName, owner) }

// errOwnerTaken is why a new owner file could not be locked: another open file holds it.
var errOwnerTaken = errors.New("held by another process")

// fileLock is the lock (an flock, LockFileEx on Windows) of the file at path, created when
// create is set. Each fileLock opens the file anew, and two opens exclude each other even in one
// process: a change's lock orders this process's goroutines as it does other processes.
func fileLock(path string, create bool) *flock.Flock {
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE
	}
	return flock.New(path, flock.SetFlag(flag), flock.SetPermissions(0o644))
}

// Close ends this process's use of the journal: the entries it returned to Terraform are handed
// (a process that ends well ends after Terraform has its state), its other claims are released
// (its owner lock), and the files closed.
func (j *Journal) Close() error {
	err := j.change(false, func() []line {
		var lines []line
		for _, key := range j.order {
			if e := j.entries[key]; e != nil && e.returned && !e.handed && e.owner == j.owner {
				lines = append(lines, line{Op: opHanded, Entry: Entry{Key: key}})
			}
		}
		return lines
	})
	if j.remote != nil {
		if cerr := j.closeRemote(); err == nil {
			err = cerr
		}
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.held != nil {
		_ = j.held.Unlock() // first: Windows removes no file that is open
		_ = os.Remove(j.held.Path())
		j.held = nil
	}
	if cerr := j.log.Close(); err == nil {
		err = cerr
	}
	return err
}

// locked runs fn holding the journal's lock, within this process and across processes.
func (j *Journal) locked(fn func() error) error {
	lock := fileLock(filepath.Join(j.dir, lockName), true)
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("journal %s: locking: %w", j.dir, err)
	}
	defer func() { _ = lock.Unlock() }()
	return fn()
}

// errCorrupt marks a log line that does not read.
var errCorrupt = errors.New("corrupt")

// refresh reads what other processes appended since the last read. A log replaced by another
// process's compaction is read again from its start. A last line without its newline is a
// write that a dead process never finished (its submission never left, since nothing leaves
// before its line is synced): it is cut off.
func (j *Journal) refresh() error {
	if replaced, err := j.replaced(); err != nil {
		return err
	} else if replaced {
		if err := j.reopen(); err != nil {
			return err
		}
	}
	if _, err := j.log.Seek(j.offset, io.SeekStart); err != nil {
		return fmt.Errorf("journal %s: %w", j.dir, err)
	}
	r := bufio.NewReader(j.log)
	for {
		b, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(b) > 0 {
				return j.cutTornLine()
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("journal %s: %w", j.dir, err)
		}
		if err := j.apply(b); err != nil {
			return fmt.Errorf("journal %s: %s at byte %d: %w; move the file away (jobs it names may then run again)",
				j.dir, logName, j.offset, err)
		}
		j.offset += int64(len(b))
	}
}

// replaced reports whether the log's name now points to another file than the one open.
func (j *Journal) replaced() (bool, error) {
	named, err := os.Stat(filepath.Join(j.dir, logName))
	if err != nil {
		return false, fmt.Errorf("journal %s: %w", j.dir, err)
	}
	open, err := j.log.Stat()
	if err != nil {
		return false, fmt.Errorf("journal %s: %w", j.dir, err)
	}
	return !os.SameFile(named, open), nil
}

func (j *Journal) reopen() error {
	f, err := os.OpenFile(filepath.Join(j.dir, logName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.dir, err)
	}
	j.log.Close()
	j.log = f
	j.reset()
	return nil
}

func (j *Journal) cutTornLine() error {
	if err := j.log.Truncate(j.offset); err != nil {
		return fmt.Errorf("journal %s: cutting an unfinished line: %w", j.dir, err)
	}
	return nil
}

// apply replays one log line.
func (j *Journal) apply(b []byte) error {
	var l line
	if err := json.Unmarshal(bytes.TrimSpace(b), &l); err != nil || l.Key == "" {
		return errCorrupt
	}
	e := j.entries[l.Key]
	if l.Op == opPut {
		if e == nil || e.Kind != l.Kind || e.Digest != l.Digest || e.Group != l.Group {
			if e == nil {
				j.order = append(j.order, l.Key)
			}
			dk := indexKey(l.Kind, l.Digest)
			j.byDigest[dk] = append(j.byDigest[dk], l.Key)
			if l.Group != "" {
				gk := indexKey(l.Kind, l.Group)
				j.byGroup[gk] = append(j.byGroup[gk], l.Key)
			}
		}
		j.entries[l.Key] = &entry{Entry: l.Entry, owner: l.Owner}
		if l.ID != "" {
			j.byID[l.ID] = l.Key
		}
		return nil
	}
	if e == nil {
		return nil // a line about an entry compacted away
	}
	switch l.Op {
	case opID:
		e.ID = l.ID
		j.byID[l.ID] = l.Key
	case opClaim:
		e.owner = l.Owner
	case opRelease:
		e.owner = ""
	case opReturned:
		e.returned = true
	case opHanded:
		e.handed, e.owner = true, ""
	case opRemove:
		delete(j.entries, l.Key)
		delete(j.byID, e.ID)
	default:
		return errCorrupt
	}
	return nil
}

// append writes lines to the log and applies them. It does not sync: see change.
func (j *Journal) append(lines ...line) error {
	var buf bytes.Buffer
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if _, err := j.log.WriteAt(buf.Bytes(), j.offset); err != nil {
		return fmt.Errorf("journal %s: %w", j.dir, err)
	}
	return j.refresh()
}

// change runs fn on the current entries, holding the lock, and appends the lines it returns.
// fn may be run more than once (a bucket journal runs it again on what another writer wrote
// first): it sets what it reports afresh each time.
// With durable set it returns once they are synced to disk; changes made at the same time share
// one sync, so that a wave of submissions does not cost a sync each. Lines written without a sync
// survive the death of the process (they are in the system's cache), not that of the host.
func (j *Journal) change(durable bool, fn func() []line) error {
	if j.remote != nil {
		return j.changeRemote(fn) // every change to a bucket is durable once written
	}
	var end int64
	var log *os.File
	err := func() error {
		j.mu.Lock()
		defer j.mu.Unlock()
		return j.locked(func() error {
			if err := j.refresh(); err != nil {
				return err
			}
			lines := fn()
			if len(lines) == 0 {
				return nil
			}
			err := j.append(lines...)
			end, log = j.offset, j.log
			return err
		})
	}()
	if err != nil || !durable || log == nil {
		return err
	}
	return j.syncThrough(log, end)
}

// syncThrough returns once the log is synced through end, syncing it unless a sync that began
// after the write did.
func (j *Journal) syncThrough(log *os.File, end int64) error {
	j.syncMu.Lock()
	defer j.syncMu.Unlock()
	if j.syncedTo >= end {
		return nil
	}
	j.mu.Lock()
	written := j.offset
	j.mu.Unlock()
	if err := log.Sync(); err != nil {
		return fmt.Errorf("journal %s: %w", j.dir, err)
	}
	j.syncedTo = written
	return nil
}

// Put records entries before their submissions leave, claimed by this process, in one write
// and one sync. An entry's Created is set to now when zero.
func (j *Journal) Put(entries ...Entry) error {
	return j.change(true, func() []line {
		lines := make([]line, len(entries))
		for i, e := range entries {
			if e.Created.IsZero() {
				e.Created = j.now().UTC()
			}
			lines[i] = line{Op: opPut, Entry: e, Owner: j.owner}
		}
		return lines
	})
}

// SetIDs records the ids the service answered with, by key.
func (j *Journal) SetIDs(ids map[string]string) error { return j.setIDs(true, ids) }

// SetIDsUnsynced is SetIDs without waiting for a sync: the lines are written (they survive the
// death of the process, in the system's cache) and the next sync, of any change or Sync, covers
// them. An id lost with the host costs no second run: its key is journaled, and resending it is
// refused as a reuse.
func (j *Journal) SetIDsUnsynced(ids map[string]string) error { return j.setIDs(false, ids) }

// Sync returns once everything written to the log is synced.
func (j *Journal) Sync() error {
	j.mu.Lock()
	log, end := j.log, j.offset
	j.mu.Unlock()
	return j.syncThrough(log, end)
}

func (j *Journal) setIDs(durable bool, ids map[string]string) error {
	return j.change(durable, func() []line {
		var lines []line
		for key, id := range ids {
			if j.entries[key] != nil {
				lines = append(lines, line{Op: opID, Entry: Entry{Key: key, ID: id}})
			}
		}
		return lines
	})
}

// Returned marks entries whose ids went back to Terraform in a create that returned. Terraform
// may die before it saves them: they stay adoptable by a later run until HandedIDs (their ids
// seen in state) or Close (this process ended well, after Terraform saved its state).
func (j *Journal) Returned(keys ...string) error { return j.mark(opReturned, keys) }

// Handed marks entries whose ids are in Terraform's state: they are never adopted again.
func (j *Journal) Handed(keys ...string) error { return j.mark(opHanded, keys) }

// HandedIDs marks the entries of the service's ids ids, seen in Terraform's state, as Handed. It
// costs no lock when the journal, as last read, has no such entry: a refresh of many resources
// reads the journal once.
func (j *Journal) HandedIDs(ids ...string) error {
	if !j.holdsUnhanded(ids) {
		return nil
	}
	return j.change(false, func() []line {
		var lines []line
		for _, id := range ids {
			if key := j.byID[id]; j.entries[key] != nil && !j.entries[key].handed {
				lines = append(lines, line{Op: opHanded, Entry: Entry{Key: key}})
			}
		}
		return lines
	})
}

func (j *Journal) holdsUnhanded(ids []string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, id := range ids {
		if e := j.entries[j.byID[id]]; e != nil && !e.handed {
			return true
		}
	}
	return false
}

// Release gives up this process's claim on entries whose outcome is unknown, so that the next
// run adopts them.
func (j *Journal) Release(keys ...string) error { return j.mark(opRelease, keys) }

// Remove forgets entries (a submission refused for sure, a destroyed job).
func (j *Journal) Remove(keys ...string) error { return j.mark(opRemove, keys) }

// RemoveID forgets the entries of the service's id id.
func (j *Journal) RemoveID(id string) error { return j.RemoveIDs(id) }

// RemoveIDs forgets the entries of the service's ids ids, in one change.
func (j *Journal) RemoveIDs(ids ...string) error {
	return j.change(false, func() []line {
		var lines []line
		for _, id := range ids {
			if key, ok := j.byID[id]; ok && j.entries[key] != nil && j.entries[key].ID == id {
				lines = append(lines, line{Op: opRemove, Entry: Entry{Key: key}})
			}
		}
		return lines
	})
}

// RemoveGroup forgets every entry of kind in group (a batch destroyed), whoever claims it.
func (j *Journal) RemoveGroup(kind, group string) error {
	return j.change(false, func() []line {
		var lines []line
		for _, key := range j.lookup(j.byGroup, kind, group, groupOf) {
			lines = append(lines, line{Op: opRemove, Entry: Entry{Key: key}})
		}
		return lines
	})
}

func (j *Journal) mark(o op, keys []string) error {
	return j.change(false, func() []line {
		var lines []line
		for _, key := range keys {
			if j.entries[key] != nil {
				lines = append(lines, line{Op: o, Entry: Entry{Key: key}})
			}
		}
		return lines
	})
}

// Adopt claims the oldest entry of kind and digest that never reached Terraform's state and that
// no live process claims, and reports it (ok false when there is none). An entry claimed by a
// process that died is adoptable; one claimed by this process is not, so identical submissions
// of one run each adopt a different entry.
func (j *Journal) Adopt(kind, digest string) (adopted Entry, ok bool, err error) {
	found, _, err := j.AdoptEach(kind, "", []string{digest})
	if err != nil || found[0].Key == "" {
		return Entry{}, false, err
	}
	return found[0], true, nil
}

// AdoptEach adopts, as Adopt, one entry of kind for each of digests, in one change: adopted[i] is
// digests[i]'s (its Key "" when there is none). Entries of group are taken first; with group ""
// the group that has adoptable entries for the most digests is (ties to the group of the oldest
// such entry), and reported as chosen ("" when nothing was adopted), so that the rows of one
// batch adopt the entries of one earlier run of it rather than of another batch's with rows
// alike. Each digest costs a look-up of its own entries: adopting for 10,000 rows never scans
// the journal 10,000 times.
func (j *Journal) AdoptEach(kind, group string, digests []string) (adopted []Entry, chosen string, err error) {
	err = j.change(false, func() []line {
		adopted = make([]Entry, len(digests)) // a bucket journal may run a change again (see change)
		alive := map[string]bool{}            // each owner's lock tried once per change
		candidates := make([][]*entry, len(digests))
		for i, d := range digests {
			for _, key := range j.lookup(j.byDigest, kind, d, digestOf) {
				if e := j.entries[key]; !e.handed && !j.expired(e) && j.claimableCached(e, alive) {
					candidates[i] = append(candidates[i], e)
				}
			}
		}
		chosen = group
		if chosen == "" {
			chosen = mostAdoptableGroup(candidates)
		}
		taken := map[string]bool{}
		var lines []line
		for i, cs := range candidates {
			e := pick(cs, chosen, taken)
			if e == nil {
				continue
			}
			taken[e.Key] = true
			adopted[i] = e.Entry
			lines = append(lines, line{Op: opClaim, Entry: Entry{Key: e.Key}, Owner: j.owner})
		}
		if len(lines) == 0 {
			chosen = group
		}
		return lines
	})
	return adopted, chosen, err
}

// mostAdoptableGroup is the group with adoptable entries for the most digests, ties to the one
// whose oldest such entry is oldest.
func mostAdoptableGroup(candidates [][]*entry) string {
	count, oldest := map[string]int{}, map[string]time.Time{}
	for _, cs := range candidates {
		seen := map[string]bool{}
		for _, e := range cs {
			if e.Group == "" || seen[e.Group] {
				continue
			}
			seen[e.Group] = true
			count[e.Group]++
			if t, ok := oldest[e.Group]; !ok || e.Created.Before(t) {
				oldest[e.Group] = e.Created
			}
		}
	}
	best := ""
	for g, n := range count {
		if best == "" || n > count[best] || n == count[best] && (oldest[g].Before(oldest[best]) || oldest[g].Equal(oldest[best]) && g < best) {
			best = g
		}
	}
	return best
}

// pick is the oldest of cs not taken, of group when one is.
func pick(cs []*entry, group string, taken map[string]bool) *entry {
	var other *entry
	for _, e := range cs {
		if taken[e.Key] {
			continue
		}
		if group == "" || e.Group == group {
			return e
		}
		if other == nil {
			other = e
		}
	}
	return other
}

// ClaimGroup claims every entry of kind in group that never reached Terraform's state and that
// no live process claims, and reports them, oldest first: what an earlier run of the group
// submitted that this run did not adopt (a batch's rows whose values changed, or that were
// removed, after a run died).
func (j *Journal) ClaimGroup(kind, group string) (claimed []Entry, err error) {
	err = j.change(false, func() []line {
		claimed = nil // a bucket journal may run a change again (see change)
		alive := map[string]bool{}
		var lines []line
		for _, key := range j.lookup(j.byGroup, kind, group, groupOf) {
			e := j.entries[key]
			if e.handed || j.expired(e) || !j.claimableCached(e, alive) {
				continue
			}
			claimed = append(claimed, e.Entry)
			lines = append(lines, line{Op: opClaim, Entry: Entry{Key: key}, Owner: j.owner})
		}
		return lines
	})
	return claimed, err
}

// lookup is the keys index holds under kind and s whose entries are still there and of that kind
// and s (each once, oldest first), pruning the others.
func (j *Journal) lookup(index map[string][]string, kind, s string, of func(*entry) string) []string {
	k := indexKey(kind, s)
	keys := index[k]
	if len(keys) == 0 {
		return nil
	}
	out := make([]string, 0, len(keys))
	seen := make(map[string]bool, len(keys))
	for _, key := range keys {
		e := j.entries[key]
		if e == nil || seen[key] || e.Kind != kind || of(e) != s {
			continue
		}
		seen[key] = true
		out = append(out, key)
	}
	if len(out) == 0 {
		delete(index, k)
	} else {
		index[k] = out
	}
	return out
}

func digestOf(e *entry) string { return e.Digest }
func groupOf(e *entry) string  { return e.Group }

func (j *Journal) expired(e *entry) bool { return j.now().Sub(e.Created) >= TTL }

// claimableCached is claimable, trying each owner's lock once: alive holds what was found.
func (j *Journal) claimableCached(e *entry, alive map[string]bool) bool {
	if e.owner == "" || e.owner == j.owner {
		return e.owner == ""
	}
	live, ok := alive[e.owner]
	if !ok {
		live = !j.claimable(e)
		alive[e.owner] = live
	}
	return !live
}

// claimable reports whether e is claimed by no live process. A claim's owner lives while its
// owner file is locked (in a bucket, while its lease lives: see remote.go).
func (j *Journal) claimable(e *entry) bool {
	switch e.owner {
	case "":
		return true
	case j.owner:
		return false
	}
	if j.remote != nil {
		return j.remote.ownerGone(j, e.owner)
	}
	lock := fileLock(j.ownerPath(e.owner), false)
	ok, err := lock.TryLock()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true // no owner file: its process ended and removed it
	case err != nil || !ok:
		return false // its process holds it
	}
	_ = lock.Unlock()
	_ = os.Remove(lock.Path())
	return true
}

// Entries lists the entries of the journal that did not expire, oldest first, for tests and
// reports.
func (j *Journal) Entries() ([]Entry, error) {
	var out []Entry
	err := j.change(false, func() []line {
		out = out[:0]
		for _, key := range j.order {
			if e := j.entries[key]; e != nil && !j.expired(e) {
				out = append(out, e.Entry)
			}
		}
		return nil
	})
	return out, err
}

// compact rewrites the log with what is still wanted (entries neither removed nor expired, as
// they stand), when that halves it.
func (j *Journal) compact() error {
	if err := j.refresh(); err != nil {
		return err
	}
	lines := j.wanted()
	if j.offset < 4096 || int64(len(lines))*2*200 > j.offset {
		return nil // small, or mostly wanted: not worth a rewrite
	}
	err := atomicfile.Write(filepath.Join(j.dir, logName), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, l := range lines {
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("journal %s: compacting: %w", j.dir, err)
	}
	if err := j.reopen(); err != nil {
		return err
	}
	return j.refresh()
}

// wanted is what a compacted log holds: the entries neither removed nor expired, as they stand.
func (j *Journal) wanted() []line {
	var lines []line
	for _, key := range j.order {
		e := j.entries[key]
		if e == nil || j.expired(e) {
			continue
		}
		lines = append(lines, line{Op: opPut, Entry: e.Entry, Owner: e.owner})
		switch {
		case e.handed:
			lines = append(lines, line{Op: opHanded, Entry: Entry{Key: key}})
		case e.returned:
			lines = append(lines, line{Op: opReturned, Entry: Entry{Key: key}})
		}
	}
	return lines
}

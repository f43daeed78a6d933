package journal

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/atomicfile"
)

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
	f, err := os.OpenFile(j.ownerPath(e.owner), os.O_RDWR, 0)
	if err != nil {
		return true // no owner file: its process ended and removed it
	}
	defer f.Close()
	if lockFile(f, false) != nil {
		return false // its process holds it
	}
	_ = unlockFile(f)
	_ = os.Remove(f.Name())
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

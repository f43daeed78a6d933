package journal

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

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
func (j *Journal) SetIDs(ids map[string]string) error {
	return j.change(true, func() []line {
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
func (j *Journal) RemoveID(id string) error {
	return j.change(false, func() []line {
		var lines []line
		for key, e := range j.entries {
			if e.ID == id {
				lines = append(lines, line{Op: opRemove, Entry: Entry{Key: key}})
			}
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
	err = j.change(false, func() []line {
		adopted, ok = Entry{}, false // a bucket journal may run a change again (see change)
		for _, key := range j.order {
			e := j.entries[key]
			if e == nil || e.handed || e.Kind != kind || e.Digest != digest || j.expired(e) || !j.claimable(e) {
				continue
			}
			adopted, ok = e.Entry, true
			return []line{{Op: opClaim, Entry: Entry{Key: key}, Owner: j.owner}}
		}
		return nil
	})
	return adopted, ok, err
}

func (j *Journal) expired(e *entry) bool { return j.now().Sub(e.Created) >= TTL }

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

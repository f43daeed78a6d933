package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clock is a settable clock for the journal's expiry.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func openT(t *testing.T, dir string, c *clock) *Journal {
	t.Helper()
	j, err := Open(PlaceOf(dir), c.now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	return j
}

// die leaves j as a killed process does: its files closed, its owner file in place, unlocked.
func die(j *Journal) {
	j.held.Close()
	j.log.Close()
}

func TestAdoptionAcrossRuns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// first acts as the first run on its journal, then ends (dies or closes).
		first func(t *testing.T, j *Journal)
		// closes is whether the first run ends with Close (else it dies).
		closes bool
		// want are the keys the second run adopts for digest "d", in order.
		want []string
	}{
		{
			name: "a killed run's entries, oldest first, each once",
			first: func(t *testing.T, j *Journal) {
				must(t, j.Put(Entry{Key: "k1", Kind: "job", Digest: "d"}, Entry{Key: "k2", Kind: "job", Digest: "d"}))
				must(t, j.SetIDs(map[string]string{"k1": "id1"}))
			},
			want: []string{"k1", "k2"},
		},
		{
			name: "an entry handed to Terraform is never adopted",
			first: func(t *testing.T, j *Journal) {
				must(t, j.Put(Entry{Key: "k1", Kind: "job", Digest: "d"}, Entry{Key: "k2", Kind: "job", Digest: "d"}))
				must(t, j.Handed("k1"))
			},
			want: []string{"k2"},
		},
		{
			name: "an entry returned to Terraform by a run that died may not have been saved: adopted",
			first: func(t *testing.T, j *Journal) {
				must(t, j.Put(Entry{Key: "k1", Kind: "job", Digest: "d"}))
				must(t, j.SetIDs(map[string]string{"k1": "id1"}))
				must(t, j.Returned("k1"))
			},
			want: []string{"k1"},
		},
		{
			name: "an entry returned by a run that ended well was saved: not adopted",
			first: func(t *testing.T, j *Journal) {
				must(t, j.Put(Entry{Key: "k1", Kind: "job", Digest: "d"}, Entry{Key: "k2", Kind: "job", Digest: "d"}))
				must(t, j.SetIDs(map[string]string{"k1": "id1"}))
				must(t, j.Returned("k1"))
				must(t, j.Release("k2"))
			},
			closes: true,
			want:   []string{"k2"},
		},
		{
			name: "an entry whose id a refresh saw in state is not adopted",
			first: func(t *testing.T, j *Journal) {
				must(t, j.Put(Entry{Key: "k1", Kind: "job", Digest: "d"}, Entry{Key: "k2", Kind: "job", Digest: "d"}))
				must(t, j.SetIDs(map[string]string{"k1": "id1", "k2": "id2"}))
				must(t, j.Returned("k1", "k2"))
				must(t, j.HandedIDs("id2", "unknown"))
			},
			want: []string{"k1"},
		},
		{
			name: "another digest or kind is not adopted",
			first: func(t *testing.T, j *Journal) {
				must(t, j.Put(Entry{Key: "k1", Kind: "job", Digest: "other"}, Entry{Key: "k2", Kind: "router", Digest: "d"}))
			},
		},
		{
			name: "removed entries are not adopted",
			first: func(t *testing.T, j *Journal) {
				must(t, j.Put(Entry{Key: "k1", Kind: "job", Digest: "d"}, Entry{Key: "k2", Kind: "job", Digest: "d"}))
				must(t, j.SetIDs(map[string]string{"k2": "id2"}))
				must(t, j.Remove("k1"))
				must(t, j.RemoveID("id2"))
			},
		},
		{
			name: "a run that ended well leaves its released entries",
			first: func(t *testing.T, j *Journal) {
				must(t, j.Put(Entry{Key: "k1", Kind: "job", Digest: "d"}))
				must(t, j.Release("k1"))
			},
			closes: true,
			want:   []string{"k1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, c := t.TempDir(), &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			first, err := Open(PlaceOf(dir), c.now)
			if err != nil {
				t.Fatal(err)
			}
			tt.first(t, first)
			if tt.closes {
				must(t, first.Close())
			} else {
				die(first)
			}
			second := openT(t, dir, c)
			var got []string
			for {
				e, ok, err := second.Adopt("job", "d")
				must(t, err)
				if !ok {
					break
				}
				got = append(got, e.Key)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("adopted %v; want %v", got, tt.want)
			}
		})
	}
}

func TestALiveRunsEntriesAreNotAdopted(t *testing.T) {
	t.Parallel()
	dir, c := t.TempDir(), &clock{t: time.Now()}
	first, second := openT(t, dir, c), openT(t, dir, c)
	must(t, first.Put(Entry{Key: "k1", Kind: "job", Digest: "d"}))
	if e, ok, err := second.Adopt("job", "d"); err != nil || ok {
		t.Fatalf("adopted %+v (%v) from a run still alive", e, err)
	}
	// Nor does the run that put it adopt it again: identical submissions each get their own.
	if e, ok, err := first.Adopt("job", "d"); err != nil || ok {
		t.Fatalf("the run that put %+v adopted it again (%v)", e, err)
	}
	must(t, first.Release("k1"))
	if e, ok, err := second.Adopt("job", "d"); err != nil || !ok || e.Key != "k1" {
		t.Fatalf("adopted %+v, %v (%v); want k1 once released", e, ok, err)
	}
}

func TestEntriesExpire(t *testing.T) {
	t.Parallel()
	dir, c := t.TempDir(), &clock{t: time.Now()}
	first, _ := Open(PlaceOf(dir), c.now)
	must(t, first.Put(Entry{Key: "k1", Kind: "job", Digest: "d"}))
	die(first)
	c.t = c.t.Add(TTL)
	second := openT(t, dir, c)
	if e, ok, err := second.Adopt("job", "d"); err != nil || ok {
		t.Fatalf("adopted %+v (%v) after %s", e, err, TTL)
	}
}

func TestTheLogIsRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		tail    string // appended to a log holding one entry
		wantErr string // "" when the entry is still adoptable
	}{
		{name: "a line a dead run never finished is cut", tail: `{"op":"put","key":"k2","ki`},
		{name: "a line that does not read is an error naming the file", tail: "not json\n", wantErr: "journal.jsonl at byte"},
		{name: "an unknown operation is an error", tail: `{"op":"paint","key":"k1"}` + "\n", wantErr: "corrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, c := t.TempDir(), &clock{t: time.Now()}
			first, _ := Open(PlaceOf(dir), c.now)
			must(t, first.Put(Entry{Key: "k1", Kind: "job", Digest: "d"}))
			die(first)
			f, err := os.OpenFile(filepath.Join(dir, logName), os.O_APPEND|os.O_WRONLY, 0)
			must(t, err)
			_, _ = f.WriteString(tt.tail)
			f.Close()
			second, err := Open(PlaceOf(dir), c.now)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), dir) {
					t.Fatalf("Open: %v; want an error naming %s and saying %q", err, dir, tt.wantErr)
				}
				if cerr := Check(PlaceOf(dir)); cerr == nil {
					t.Fatal("Check passed a corrupt journal")
				}
				return
			}
			must(t, err)
			defer second.Close()
			if e, ok, err := second.Adopt("job", "d"); err != nil || !ok || e.Key != "k1" {
				t.Fatalf("adopted %+v, %v (%v); want k1", e, ok, err)
			}
			must(t, second.Put(Entry{Key: "k3", Kind: "job", Digest: "e"}))
			entries, err := second.Entries()
			must(t, err)
			if len(entries) != 2 {
				t.Fatalf("entries %+v; want k1 and k3 after the torn line", entries)
			}
		})
	}
}

func TestCheckNamesAJournalThatCannotBeWritten(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	must(t, os.WriteFile(file, nil, 0o600))
	dir := filepath.Join(file, "journal")
	if err := Check(PlaceOf(dir)); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Check: %v; want an error naming %s", err, dir)
	}
	if err := Check(PlaceOf(t.TempDir())); err != nil {
		t.Fatalf("Check of a fresh directory: %v", err)
	}
}

func TestCompactionKeepsWhatIsWanted(t *testing.T) {
	t.Parallel()
	dir, c := t.TempDir(), &clock{t: time.Now()}
	first, _ := Open(PlaceOf(dir), c.now)
	for i := range 200 {
		key := "gone" + string(rune('a'+i%26)) + time.Duration(i).String()
		must(t, first.Put(Entry{Key: key, Kind: "job", Digest: "x"}))
		must(t, first.Remove(key))
	}
	must(t, first.Put(Entry{Key: "kept", Kind: "job", Digest: "d"}, Entry{Key: "handed", Kind: "job", Digest: "d"}))
	must(t, first.Handed("handed"))
	before := size(t, dir)
	die(first)
	second := openT(t, dir, c)
	if after := size(t, dir); after*4 > before {
		t.Fatalf("the log is %d bytes after compaction, %d before; want it much smaller", after, before)
	}
	if e, ok, err := second.Adopt("job", "d"); err != nil || !ok || e.Key != "kept" {
		t.Fatalf("adopted %+v, %v (%v); want kept", e, ok, err)
	}
	if _, ok, _ := second.Adopt("job", "d"); ok {
		t.Fatal("an entry handed to Terraform was adopted after compaction")
	}
}

func size(t *testing.T, dir string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, logName))
	must(t, err)
	return fi.Size()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

package journal

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// A batch's rows adopt, each once, the entries an earlier run of that batch left (its group),
// before those of another batch with rows alike; what is left of the group once they adopted is
// claimed by ClaimGroup, and RemoveIDs and RemoveGroup forget what they name.
func TestAdoptEachAndGroups(t *testing.T) {
	t.Parallel()
	// Two dead runs: batch g1 put rows a and b (and c, which changed since), batch g2 put a row
	// alike to a, and an older one.
	put := []Entry{
		{Key: "g2-a", Kind: "row", Digest: "a", Group: "g2", Created: time.Unix(100, 0)},
		{Key: "g1-a", Kind: "row", Digest: "a", Group: "g1", Created: time.Unix(200, 0)},
		{Key: "g1-b", Kind: "row", Digest: "b", Group: "g1", Created: time.Unix(200, 0), ID: "id-b"},
		{Key: "g1-c", Kind: "row", Digest: "c-old", Group: "g1", Created: time.Unix(200, 0)},
		{Key: "job-a", Kind: "job", Digest: "a", Created: time.Unix(50, 0)},
	}
	tests := []struct {
		name      string
		group     string
		digests   []string
		want      []string // adopted keys, "" for none
		chosen    string
		leftovers []string // ClaimGroup(row, chosen) after the adoption
	}{
		{
			name: "the group most rows match is chosen, over an older one matching fewer", digests: []string{"a", "b", "c-new"},
			want: []string{"g1-a", "g1-b", ""}, chosen: "g1", leftovers: []string{"g1-c"},
		},
		{
			name: "a known group is preferred", group: "g2", digests: []string{"a", "b"},
			want: []string{"g2-a", "g1-b"}, chosen: "g2", leftovers: nil,
		},
		{
			name: "rows alike each adopt their own entry, the chosen group's first", digests: []string{"a", "a", "a"},
			want: []string{"g2-a", "g1-a", ""}, chosen: "g2", leftovers: nil,
		},
		{
			name: "nothing to adopt: no group chosen", digests: []string{"z"}, want: []string{""}, chosen: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, c := t.TempDir(), &clock{t: time.Unix(300, 0)}
			first, _ := Open(PlaceOf(dir), c.now)
			must(t, first.Put(put...))
			must(t, first.SetIDs(map[string]string{"g1-b": "id-b"}))
			die(first)
			j := openT(t, dir, c)
			got, chosen, err := j.AdoptEach("row", tt.group, tt.digests)
			must(t, err)
			keys := make([]string, len(got))
			for i, e := range got {
				keys[i] = e.Key
			}
			if !slices.Equal(keys, tt.want) || chosen != tt.chosen {
				t.Fatalf("adopted %q, group %q; want %q, %q", keys, chosen, tt.want, tt.chosen)
			}
			if tt.chosen == "" {
				return
			}
			left, err := j.ClaimGroup("row", tt.chosen)
			must(t, err)
			var leftKeys []string
			for _, e := range left {
				leftKeys = append(leftKeys, e.Key)
			}
			if !slices.Equal(leftKeys, tt.leftovers) {
				t.Fatalf("left over %q; want %q", leftKeys, tt.leftovers)
			}
		})
	}
}

func TestRemoveIDsAndGroup(t *testing.T) {
	t.Parallel()
	j := openT(t, t.TempDir(), &clock{t: time.Now()})
	must(t, j.Put(Entry{Key: "k1", Kind: "row", Digest: "1", Group: "g"}, Entry{Key: "k2", Kind: "row", Digest: "2", Group: "g"},
		Entry{Key: "k3", Kind: "row", Digest: "3", Group: "h"}, Entry{Key: "k4", Kind: "job", Digest: "4"}))
	must(t, j.SetIDs(map[string]string{"k3": "id3", "k4": "id4"}))
	must(t, j.RemoveGroup("row", "g"))
	must(t, j.RemoveIDs("id3", "id-unknown"))
	left, err := j.Entries()
	must(t, err)
	if len(left) != 1 || left[0].Key != "k4" {
		t.Fatalf("left %+v; want k4 alone", left)
	}
}

// Adopting for 10,000 rows is a look-up each, not a scan of the journal each: the time for
// 10,000 rows stays within a small multiple of that for 1,000 (a scan each would be 100 times).
func TestAdoptEachScales(t *testing.T) {
	t.Parallel()
	elapsed := func(n int) time.Duration {
		dir, c := t.TempDir(), &clock{t: time.Now()}
		first, _ := Open(PlaceOf(dir), c.now)
		entries, digests := make([]Entry, n), make([]string, n)
		for i := range n {
			digests[i] = fmt.Sprint("d", i)
			entries[i] = Entry{Key: fmt.Sprint("k", i), Kind: "row", Digest: digests[i], Group: "g"}
		}
		must(t, first.Put(entries...))
		die(first)
		j := openT(t, dir, c)
		start := time.Now()
		got, _, err := j.AdoptEach("row", "", digests)
		took := time.Since(start)
		must(t, err)
		if got[n-1].Key != fmt.Sprint("k", n-1) {
			t.Fatalf("row %d adopted %q", n-1, got[n-1].Key)
		}
		return took
	}
	small, large := elapsed(1000), elapsed(10000)
	t.Logf("AdoptEach: 1,000 rows %s, 10,000 rows %s", small, large)
	if large > 30*small+50*time.Millisecond {
		t.Errorf("10,000 rows took %s, 1,000 took %s: not linear", large, small)
	}
}

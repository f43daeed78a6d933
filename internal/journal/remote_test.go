package journal

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/svc-org/terraform-provider-svc/internal/s3gw"
)

// The journal in a bucket, against a real S3 server (Versity S3 Gateway, started per test).

// syncClock is a clock that sleeping advances, shared by the journals of a test (and their
// goroutines): no test waits for real time.
type syncClock struct {
	mu     sync.Mutex
	t      time.Time
	slept  time.Duration
	onWait func() // run at each sleep, before the clock moves
}

func newSyncClock() *syncClock { return &syncClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *syncClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *syncClock) sleep(d time.Duration) {
	c.mu.Lock()
	on := c.onWait
	c.mu.Unlock()
	if on != nil {
		on()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(max(d, time.Millisecond))
	c.slept += max(d, time.Millisecond)
}

func (c *syncClock) waited() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}

// testGateway is a gateway with one bucket; each journal of a test goes under a prefix of its
// own.
type testGateway struct {
	*s3gw.Server
	n  int
	mu sync.Mutex
}

func startGateway(t *testing.T) *testGateway {
	t.Helper()
	srv := s3gw.Start(t)
	srv.CreateBucket("journals")
	return &testGateway{Server: srv}
}

// url is a new journal's URL.
func (g *testGateway) url() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	return g.URL("journals", fmt.Sprintf("runs/%d", g.n))
}

// keys lists the objects under the journal of url whose keys contain part.
func (g *testGateway) keys(t *testing.T, url, part string) []string {
	t.Helper()
	prefix := strings.TrimPrefix(strings.SplitN(url, "?", 2)[0], "s3://journals/") + "/journal/"
	out, err := g.Client().ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String("journals"), Prefix: aws.String(prefix)})
	must(t, err)
	var keys []string
	for _, o := range out.Contents {
		if k := aws.ToString(o.Key); strings.Contains(k, part) {
			keys = append(keys, strings.TrimPrefix(k, prefix))
		}
	}
	return keys
}

func (g *testGateway) put(t *testing.T, url, rel, body string) {
	t.Helper()
	key := strings.TrimPrefix(strings.SplitN(url, "?", 2)[0], "s3://journals/") + "/journal/" + rel
	_, err := g.Client().PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("journals"), Key: aws.String(key), Body: strings.NewReader(body)})
	must(t, err)
}

// openBucketT opens the journal at url as a process of its own, whose lease is renewed only by
// hand (renewT).
func openBucketT(t *testing.T, url string, c *syncClock) *Journal {
	t.Helper()
	j, err := openRemote(url, remoteOptions{now: c.now, sleep: c.sleep, renewEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if j.remote.stop != nil {
			_ = j.Close()
		}
	})
	return j
}

// dieRemote leaves j as a killed process does: its lease no longer renewed, still there.
func dieRemote(j *Journal) {
	j.remote.stopRenewing()
	j.remote.store.Close()
}

func TestBucketAdoptionAcrossRuns(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	tests := []struct {
		name   string
		first  func(t *testing.T, j *Journal)
		closes bool // the first run ends with Close, else it dies
		want   []string
		// wait is whether the second run waits for the first's lease to expire.
		wait bool
	}{
		{
			name: "a killed run's entries, oldest first, each once, after its lease expired",
			first: func(t *testing.T, j *Journal) {
				must(t, j.Put(Entry{Key: "k1", Kind: "job", Digest: "d"}, Entry{Key: "k2", Kind: "job", Digest: "d"}))
				must(t, j.SetIDs(map[string]string{"k1": "id1"}))
			},
			want: []string{"k1", "k2"}, wait: true,
		},
		{
			name: "an entry handed to Terraform is never adopted",
			first: func(t *testing.T, j *Journal) {
				must(t, j.Put(Entry{Key: "k1", Kind: "job", Digest: "d"}, Entry{Key: "k2", Kind: "job", Digest: "d"}))
				must(t, j.Handed("k1"))
			},
			want: []string{"k2"}, wait: true,
		},
		{
			name: "an entry returned by a run that died may not have been saved: adopted",
			first: func(t *testing.T, j *Journal) {
				must(t, j.Put(Entry{Key: "k1", Kind: "job", Digest: "d"}))
				must(t, j.SetIDs(map[string]string{"k1": "id1"}))
				must(t, j.Returned("k1"))
			},
			want: []string{"k1"}, wait: true,
		},
		{
			name: "a run that ended well removed its lease: its released entries at once, its returned ones never",
			first: func(t *testing.T, j *Journal) {
				must(t, j.Put(Entry{Key: "k1", Kind: "job", Digest: "d"}, Entry{Key: "k2", Kind: "job", Digest: "d"}))
				must(t, j.Returned("k1"))
			},
			closes: true, want: []string{"k2"},
		},
		{
			name: "removed entries and other digests are not adopted",
			first: func(t *testing.T, j *Journal) {
				must(t, j.Put(Entry{Key: "k1", Kind: "job", Digest: "d"}, Entry{Key: "k2", Kind: "job", Digest: "d"}, Entry{Key: "k3", Kind: "job", Digest: "e"}))
				must(t, j.SetIDs(map[string]string{"k2": "id2"}))
				must(t, j.Remove("k1"))
				must(t, j.RemoveID("id2"))
			},
			wait: true, // for k3, which another create could adopt
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url, c := g.url(), newSyncClock()
			first := openBucketT(t, url, c)
			tt.first(t, first)
			if tt.closes {
				must(t, first.Close())
			} else {
				dieRemote(first)
			}
			second := openBucketT(t, url, c)
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
			// The rule: the next run's Open waits for a dead run's lease (at most Lease), not
			// for a closed run's (its lease is gone).
			if w := c.waited(); tt.wait && (w == 0 || w > Lease) || !tt.wait && w != 0 {
				t.Fatalf("waited %s for the first run's lease; want (0, %s] when it died, 0 when it closed", w, Lease)
			}
		})
	}
}

// A claim is honoured while its owner's lease lives: a run opening the journal waits until the
// lease of each claim's owner is seen renewed (then it does not adopt, and submits its own) or
// ends; a run whose claims appear after it opened honours them while their lease is unexpired.
// Either adopts an entry once its owner releases it.
func TestBucketALiveRunsEntriesAreNotAdopted(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	tests := []struct {
		name string
		// openBefore opens the second run before the first puts its entry.
		openBefore bool
	}{
		{name: "claims there at Open: the owner seen renewing", openBefore: false},
		{name: "claims made after Open: the owner's lease unexpired", openBefore: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url, c := g.url(), newSyncClock()
			first := openBucketT(t, url, c)
			c.onWait = func() { must(t, first.remote.renew(first)) } // the first run lives: it renews as time passes
			var second *Journal
			if tt.openBefore {
				second = openBucketT(t, url, c)
			}
			must(t, first.Put(Entry{Key: "k1", Kind: "job", Digest: "d"}))
			if !tt.openBefore {
				second = openBucketT(t, url, c)
				if w := c.waited(); w == 0 || w >= Lease {
					t.Fatalf("the second run's Open waited %s to see the first's lease renewed; want (0, %s)", w, Lease)
				}
			}
			if e, ok, err := second.Adopt("job", "d"); err != nil || ok {
				t.Fatalf("adopted %+v (%v) from a run still alive", e, err)
			}
			if e, ok, err := first.Adopt("job", "d"); err != nil || ok {
				t.Fatalf("the run that put %+v adopted it again (%v)", e, err)
			}
			must(t, first.Release("k1"))
			if e, ok, err := second.Adopt("job", "d"); err != nil || !ok || e.Key != "k1" {
				t.Fatalf("adopted %+v, %v (%v); want k1 once released", e, ok, err)
			}
		})
	}
}

// Two live runs adopting a dead run's entries at the same time each get different ones, and
// between them all: a slot of the journal is written by one writer only.
func TestBucketTwoRunsNeverAdoptTheSameEntry(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	url, c := g.url(), newSyncClock()
	dead := openBucketT(t, url, c)
	var entries []Entry
	for i := range 12 {
		entries = append(entries, Entry{Key: fmt.Sprintf("k%02d", i), Kind: "job", Digest: "d"})
	}
	must(t, dead.Put(entries...))
	dieRemote(dead)
	// Each Open waits for the dead run's lease; the runs live on: each renews once open, and no
	// time passes after.
	runs := []*Journal{openBucketT(t, url, c), openBucketT(t, url, c)}
	for _, j := range runs {
		must(t, j.remote.renew(j))
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for _, j := range runs {
		for range 3 { // three creates at a time in each run
			wg.Go(func() {
				for {
					e, ok, err := j.Adopt("job", "d")
					if err != nil {
						t.Error(err)
						return
					}
					if !ok {
						return
					}
					mu.Lock()
					seen[e.Key]++
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if len(seen) != len(entries) {
		t.Fatalf("adopted %d entries (%v); want all %d", len(seen), seen, len(entries))
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s adopted %d times; want once", k, n)
		}
	}
}

// Compaction: the slots a run writes are folded into a snapshot and deleted, during the run
// (every compactDuring changes, or once the slots since the last snapshot outweigh what it would
// hold) and at the next Open (compactAfter slots since the last snapshot), keeping what is
// wanted.
func TestBucketCompactionKeepsWhatIsWanted(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	tests := []struct {
		name string
		// changes are the first run's; the second run opens after it died.
		changes func(t *testing.T, j *Journal)
		// maxSlots is the most slots left by the first run; slotsAfterOpen how many are left
		// once the second run opened.
		maxSlots, slotsAfterOpen int
		want                     []string // Entries of the second run
	}{
		{
			name: "many changes, each an entry",
			changes: func(t *testing.T, j *Journal) {
				for i := range compactDuring + 10 {
					must(t, j.Put(Entry{Key: fmt.Sprintf("k%03d", i), Kind: "job", Digest: "x"}))
				}
			},
			maxSlots: 11, slotsAfterOpen: 11, want: []string{"k000", "k265"},
		},
		{
			name: "entries put and removed: the slots outweigh the snapshot",
			changes: func(t *testing.T, j *Journal) {
				for i := range compactAfter {
					must(t, j.Put(Entry{Key: fmt.Sprintf("gone%d", i), Kind: "job", Digest: "x"}))
					must(t, j.Remove(fmt.Sprintf("gone%d", i)))
				}
				must(t, j.Put(Entry{Key: "kept", Kind: "job", Digest: "d"}, Entry{Key: "handed", Kind: "job", Digest: "d"}))
				must(t, j.Handed("handed"))
			},
			maxSlots: 4, slotsAfterOpen: 4, want: []string{"kept", "handed"},
		},
		{
			name: "a change short of both: Open compacts",
			changes: func(t *testing.T, j *Journal) {
				for i := range compactAfter {
					must(t, j.Put(Entry{Key: fmt.Sprintf("k%03d", i), Kind: "job", Digest: "x"}))
				}
			},
			maxSlots: compactAfter, slotsAfterOpen: 1, want: []string{"k000", "k063"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url, c := g.url(), newSyncClock()
			first := openBucketT(t, url, c)
			tt.changes(t, first)
			if slots := len(g.keys(t, url, "seg/")); slots > tt.maxSlots {
				t.Fatalf("%d slots after the first run; want at most %d", slots, tt.maxSlots)
			}
			dieRemote(first)
			second := openBucketT(t, url, c)
			if slots := g.keys(t, url, "seg/"); len(slots) != tt.slotsAfterOpen {
				t.Fatalf("%d slots after Open (%v); want %d", len(slots), slots, tt.slotsAfterOpen)
			}
			entries, err := second.Entries()
			must(t, err)
			if len(entries) == 0 || entries[0].Key != tt.want[0] || entries[len(entries)-1].Key != tt.want[1] {
				t.Fatalf("entries %+v; want from %s to %s", entries, tt.want[0], tt.want[1])
			}
		})
	}
	t.Run("a handed entry is not adopted after compaction", func(t *testing.T) {
		t.Parallel()
		url, c := g.url(), newSyncClock()
		first := openBucketT(t, url, c)
		must(t, first.Put(Entry{Key: "kept", Kind: "job", Digest: "d"}, Entry{Key: "handed", Kind: "job", Digest: "d"}))
		must(t, first.Handed("handed"))
		must(t, first.Release("kept"))
		for i := range compactAfter {
			must(t, first.Put(Entry{Key: fmt.Sprintf("k%03d", i), Kind: "job", Digest: "x"}))
		}
		must(t, first.Close())
		second := openBucketT(t, url, c)
		if slots := g.keys(t, url, "seg/"); len(slots) != 1 {
			t.Fatalf("slots after Open %v; want one snapshot", slots)
		}
		if e, ok, err := second.Adopt("job", "d"); err != nil || !ok || e.Key != "kept" {
			t.Fatalf("adopted %+v, %v (%v); want kept", e, ok, err)
		}
		if e, ok, _ := second.Adopt("job", "d"); ok {
			t.Fatalf("adopted %+v, handed to Terraform, after compaction", e)
		}
	})
}

// What a bucket may hold besides whole slots: a compaction's leftovers are read past and
// deleted; a slot that does not read, or missing slots, are errors naming the journal and the
// object, from Open and from Check (at plan time), never a journal read as empty.
func TestBucketTornState(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	put := func(k string) string {
		return `{"op":"put","key":"` + k + `","kind":"job","digest":"d","created":"2026-01-01T00:00:00Z"}` + "\n"
	}
	seg := func(o op) string { return `{"op":"` + string(o) + `","key":"w"}` + "\n" }
	tests := []struct {
		name    string
		slots   map[string]string
		want    []string // adopted, when it reads
		wantErr string
		left    int // slots left after Open
	}{
		{
			name: "a compaction that died deleting: the snapshot supersedes the slots below",
			slots: map[string]string{
				"seg/00000000000000000002": seg(opSegment) + put("k1"),
				"seg/00000000000000000003": seg(opSegment) + put("k2"),
				"seg/00000000000000000004": seg(opSnapshot) + put("k2"),
				"seg/00000000000000000005": seg(opSegment) + put("k3"),
			},
			want: []string{"k2", "k3"}, left: 2,
		},
		{
			name:    "a slot that does not read",
			slots:   map[string]string{"seg/00000000000000000001": seg(opSegment) + "not json\n"},
			wantErr: "seg/00000000000000000001 line 2",
		},
		{
			name:    "an object that is no slot",
			slots:   map[string]string{"seg/00000000000000000001": "hello\n"},
			wantErr: "has no header",
		},
		{
			name:    "a slot missing between two",
			slots:   map[string]string{"seg/00000000000000000001": seg(opSegment) + put("k1"), "seg/00000000000000000003": seg(opSegment) + put("k3")},
			wantErr: "the slots between are missing",
		},
		{
			name:    "the first slots missing, no snapshot after",
			slots:   map[string]string{"seg/00000000000000000007": seg(opSegment) + put("k1")},
			wantErr: "no snapshot follows",
		},
		{
			name:    "a foreign object among the slots",
			slots:   map[string]string{"seg/notes.txt": "x\n"},
			wantErr: "is not a slot of the journal",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url, c := g.url(), newSyncClock()
			for k, v := range tt.slots {
				g.put(t, url, k, v)
			}
			j, err := openRemote(url, remoteOptions{now: c.now, sleep: c.sleep, renewEvery: -1})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), url) {
					t.Fatalf("Open: %v; want an error naming %s and saying %q", err, url, tt.wantErr)
				}
				if cerr := Check(PlaceOf(url)); cerr == nil || !strings.Contains(cerr.Error(), tt.wantErr) {
					t.Fatalf("Check: %v; want %q", cerr, tt.wantErr)
				}
				return
			}
			must(t, err)
			defer j.Close()
			var got []string
			for {
				e, ok, err := j.Adopt("job", "d")
				must(t, err)
				if !ok {
					break
				}
				got = append(got, e.Key)
			}
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("adopted %v; want %v", got, tt.want)
			}
			if left := g.keys(t, url, "seg/"); len(left) != tt.left+len(tt.want) { // plus a claim each
				t.Fatalf("slots %v; want %d after the leftovers' deletion and the claims", left, tt.left+len(tt.want))
			}
		})
	}
}

// Check refuses, naming the journal, a bucket that cannot be used: missing, unreachable,
// refusing the credentials, or letting them read and not write.
func TestBucketCheck(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	stopped := s3gw.Start(t)
	stopped.CreateBucket("journals")
	stopped.Stop()
	refusing := s3gw.StartAs(t, "other-root-access", s3gw.SecretKey)
	refusing.CreateBucket("journals")
	readOnly := s3gw.StartWithReader(t, "journals")
	tests := []struct {
		name, url, wantErr string
	}{
		{name: "a bucket that can be used", url: g.url()},
		{name: "a missing bucket", url: g.URL("nope", "p"), wantErr: `bucket "nope" does not exist`},
		{name: "an unreachable server", url: stopped.URL("journals", "p"), wantErr: `could not be reached`},
		{name: "refused credentials", url: refusing.URL("journals", "p"), wantErr: `refused the credentials`},
		{name: "a user who may read, not write", url: readOnly.URL("journals", "p"), wantErr: `cannot be written`},
		{name: "a URL that does not parse", url: "s3://journals/p?colour=blue", wantErr: `unknown query parameter`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Check(PlaceOf(tt.url))
			if tt.wantErr == "" {
				must(t, err)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), strings.SplitN(tt.url, "?", 2)[0]) {
				t.Fatalf("Check: %v; want an error naming %s and saying %q", err, tt.url, tt.wantErr)
			}
		})
	}
}

// Changes made at once share a slot (group commit): a wave of 200 submissions, each its own
// Put, costs a few writes, not 200. The timings are logged for the report, not held to a limit.
func TestBucketChangeCost(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	url, c := g.url(), newSyncClock()
	j := openBucketT(t, url, c)
	start := time.Now()
	const n = 50
	for i := range n {
		must(t, j.Put(Entry{Key: fmt.Sprintf("s%d", i), Kind: "job", Digest: "d"}))
	}
	one := time.Since(start) / n
	// A wave of 200 submissions at once (as a batch's rows, or -parallelism=200), each its own Put.
	start = time.Now()
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() { must(t, j.Put(Entry{Key: fmt.Sprintf("w%d", i), Kind: "job", Digest: "d"})) })
	}
	wg.Wait()
	wave := time.Since(start)
	if slots := len(g.keys(t, url, "seg/")) - n; slots > 20 {
		t.Errorf("200 Puts at once took %d slots; want them grouped into a few", slots)
	}
	start = time.Now()
	rows := make([]Entry, 200)
	for i := range rows {
		rows[i] = Entry{Key: fmt.Sprintf("r%d", i), Kind: "job", Digest: "d"}
	}
	must(t, j.Put(rows...))
	together := time.Since(start)
	start = time.Now()
	must(t, Check(PlaceOf(url)))
	check := time.Since(start)
	t.Logf("a Put: %s; 200 Puts at once: %s; 200 entries in one Put: %s; Check (plan time) of this journal: %s", one, wave, together, check)
}

// A change whose PUT the bucket stored but whose answer was lost (the connection closed before
// it): the S3 client's retry finds the slot taken (If-None-Match: *), by that same change, which
// is then read back as written: the change is in the journal once, in one slot, and the Put
// succeeds.
func TestBucketLostPutAnswerIsWrittenOnce(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	target, err := neturl.Parse(g.Endpoint())
	must(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var armed, lost atomic.Bool
	var puts atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !armed.Load() || r.Method != http.MethodPut || !strings.Contains(r.URL.Path, "/journal/seg/") {
			proxy.ServeHTTP(w, r)
			return
		}
		puts.Add(1)
		if !lost.CompareAndSwap(false, true) {
			proxy.ServeHTTP(w, r)
			return
		}
		proxy.ServeHTTP(httptest.NewRecorder(), r) // the bucket stores it...
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close() // ...and its answer never comes back
		}
	}))
	t.Cleanup(front.Close) // after the journal's own cleanup, which closes it through front
	url := g.url()
	viaFront := strings.Replace(url, g.Endpoint(), front.URL, 1)
	j := openBucketT(t, viaFront, newSyncClock())
	before := len(g.keys(t, url, "seg/"))

	armed.Store(true)
	must(t, j.Put(Entry{Key: "k1", Kind: "job", Digest: "d1"}))

	if !lost.Load() || puts.Load() < 2 {
		t.Fatalf("lost answers %v, PUTs of a slot %d; want the first answer lost and the PUT resent", lost.Load(), puts.Load())
	}
	if got := len(g.keys(t, url, "seg/")) - before; got != 1 {
		t.Errorf("the change took %d slots; want 1", got)
	}
	reader := openBucketT(t, url, newSyncClock())
	entries, err := reader.Entries()
	must(t, err)
	if len(entries) != 1 || entries[0].Key != "k1" {
		t.Errorf("a fresh reader finds %v; want the entry k1 once", entries)
	}
}

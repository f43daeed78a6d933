package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/url"
	"path"
	"slices"
	"sync"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/bucket"
	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/journal"
)

// journalKindBatchRow is svc_job_batch's kind of journal entry: one per row submission.
const journalKindBatchRow = "svc_job_batch"

// batchRowDigest is the digest of what decides a row's job: the row's key and its workflow (the
// template with the row's values applied, canonical, which in.hash digests). Never the partner
// key, which goes in extra_data, not in the workflow. The key is hashed as it is, not read as
// JSON: rows "1" and "1.0" are two rows.
func batchRowDigest(in batchRowInput) string {
	h := sha256.New()
	for _, p := range []string{journalKindBatchRow, in.key, in.hash} {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// batchJournal is what one apply of svc_job_batch writes to the journal of submissions. Its
// entries' group is the batch's id: a create that adopts rows of an earlier create that died
// before saving state takes that create's id (the group most of its rows adopt from), so that
// every run of one batch writes to one group, and what that group holds that no configured row
// adopts is the batch's (see leftovers). A zero batchJournal (the journal off) does nothing.
type batchJournal struct {
	j     *journal.Journal
	group string

	mu      sync.Mutex
	entries map[string]*batchRowEntry // by row key: the entry of the row's submission this apply
	ids     map[string]string         // idempotency key to job id, answered and not yet written
	writing bool                      // a worker is writing ids
	written sync.Cond                 // signalled when writing ends
}

// batchRowEntry is a row's entry: its idempotency key, whether an earlier run put it (and the id
// it recorded), and what this apply did with it.
type batchRowEntry struct {
	key     string
	adopted bool
	id      string // the id an earlier run recorded, when adopted
	sent    bool   // this apply sent the key, or it was adopted (an earlier run may have sent it)
	settled bool   // the submission ran nothing for sure: the entry is removed
}

// on reports whether the journal is used.
func (b *batchJournal) on() bool { return b != nil && b.j != nil }

// entry is the row's entry, nil when it has none.
func (b *batchJournal) entry(row string) *batchRowEntry {
	if !b.on() {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.entries[row]
}

// submitsAnew reports whether a task submits its row under a new key: no wait for a job state
// holds, no files of a row that succeeded, no resend of a key state holds (see runTask).
func (t batchTask) submitsAnew() bool {
	held := t.held
	sameInput := held != nil && held.InputHash == t.in.hash
	switch {
	case sameInput && held.inFlight(), sameInput && held.Status == client.JobSucceeded:
		return false
	case sameInput && held.Status == batchRowUnknown && held.Key != "":
		return false
	}
	return true
}

// openBatchJournal readies the journal for an apply: the rows state holds are marked as handed
// to Terraform (never adopted again), and each task that submits anew adopts, in one change, an
// entry of its digest that an earlier run left (a job or a key that run sent and never saved in
// state), of this batch's group first. A create with no id yet takes the group most of its rows
// adopt from, or a new one. An error means nothing may be sent.
func (d *providerData) openBatchJournal(ctx context.Context, id *types.String, outputDir string, tasks []batchTask, held batchHeld) (*batchJournal, error) {
	group := ""
	if !id.IsUnknown() && !id.IsNull() {
		group = id.ValueString()
	}
	sj := d.journalForBatch(outputDir)
	if sj == nil {
		if group == "" {
			*id = newBatchID()
		}
		return &batchJournal{}, nil
	}
	j, err := sj.open()
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, key := range slices.Sorted(maps.Keys(held.results)) {
		if k := held.book[key].Key; k != "" {
			keys = append(keys, k)
		}
	}
	if err := j.Handed(keys...); err != nil {
		return nil, err
	}
	b := &batchJournal{j: j, entries: map[string]*batchRowEntry{}, ids: map[string]string{}}
	b.written.L = &b.mu
	var anew []batchTask
	var digests []string
	for _, t := range tasks {
		if t.submitsAnew() {
			anew = append(anew, t)
			digests = append(digests, batchRowDigest(t.in))
		}
	}
	adopted, chosen, err := j.AdoptEach(journalKindBatchRow, group, digests)
	if err != nil {
		return nil, err
	}
	switch {
	case group != "":
	case chosen != "":
		*id = types.StringValue(chosen) // the batch an earlier create began, which died before saving it
	default:
		*id = newBatchID()
	}
	b.group = id.ValueString()
	for i, e := range adopted {
		if e.Key != "" {
			b.entries[anew[i].in.key] = &batchRowEntry{key: e.Key, adopted: true, id: e.ID, sent: true}
			logInfo(ctx, "batch row adopted from the journal", map[string]any{"row": anew[i].in.key, "idempotency_key": e.Key, "job_id": e.ID})
		}
	}
	return b, nil
}

// put journals new entries for the tasks of a wave that submit anew and adopted nothing, in one
// write and one sync, before any of them is sent; it returns each such row's key.
func (b *batchJournal) put(wave []batchTask) (map[string]string, error) {
	if !b.on() {
		return nil, nil
	}
	keys := map[string]string{}
	var entries []journal.Entry
	b.mu.Lock()
	for _, t := range wave {
		if !t.submitsAnew() || b.entries[t.in.key] != nil {
			continue
		}
		key := uuid.NewString()
		keys[t.in.key] = key
		entries = append(entries, journal.Entry{Key: key, Kind: journalKindBatchRow, Digest: batchRowDigest(t.in), Group: b.group})
	}
	b.mu.Unlock()
	if len(entries) == 0 {
		return nil, nil
	}
	if err := b.j.Put(entries...); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for row, key := range keys {
		b.entries[row] = &batchRowEntry{key: key}
	}
	return keys, nil
}

// renew replaces a row's adopted entry whose job is gone from the service with a new one, synced
// before the row is submitted again.
func (b *batchJournal) renew(ctx context.Context, t batchTask) (string, error) {
	old := b.entry(t.in.key)
	if old != nil {
		if err := b.j.Remove(old.key); err != nil {
			logWarn(ctx, "updating the journal failed", map[string]any{"error": err.Error(), "idempotency_key": old.key})
		}
	}
	key := uuid.NewString()
	if err := b.j.Put(journal.Entry{Key: key, Kind: journalKindBatchRow, Digest: batchRowDigest(t.in), Group: b.group}); err != nil {
		return "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.entries[t.in.key] = &batchRowEntry{key: key}
	return key, nil
}

// sending records that the row's key goes out.
func (b *batchJournal) sending(row string) {
	if e := b.entry(row); e != nil {
		b.mu.Lock()
		e.sent = true
		b.mu.Unlock()
	}
}

// ranNothing records that the row's submission ran nothing for sure: its entry goes.
func (b *batchJournal) ranNothing(row string) {
	if e := b.entry(row); e != nil {
		b.mu.Lock()
		e.settled = true
		b.mu.Unlock()
	}
}

// answered records the id the service gave key. The ids of the rows answered while a worker
// writes are written together by that worker, in one change: no worker waits for another's
// write. They are written without waiting for a sync (the next wave's entries, or the apply's
// end, sync them): a write survives the death of the process at once, and an id lost with the
// host costs no second run, since its key is journaled and a resend is refused as a reuse.
func (b *batchJournal) answered(ctx context.Context, key, id string) {
	if !b.on() || id == "" {
		return
	}
	b.mu.Lock()
	b.ids[key] = id
	if b.writing {
		b.mu.Unlock()
		return
	}
	b.writing = true
	for len(b.ids) > 0 {
		ids := b.ids
		b.ids = map[string]string{}
		b.mu.Unlock()
		if err := b.j.SetIDsUnsynced(ids); err != nil {
			logWarn(ctx, "recording the rows' ids in the journal failed", map[string]any{"error": err.Error(), "rows": len(ids)})
		}
		b.mu.Lock()
	}
	b.writing = false
	b.written.Broadcast()
	b.mu.Unlock()
}

// flush returns once every id answered is written and synced.
func (b *batchJournal) flush(ctx context.Context) {
	if !b.on() {
		return
	}
	b.mu.Lock()
	for b.writing {
		b.written.Wait()
	}
	b.mu.Unlock()
	if err := b.j.Sync(); err != nil {
		logWarn(ctx, "syncing the journal failed", map[string]any{"error": err.Error()})
	}
}

// end closes the entries of the apply's rows once their state is known: a row whose job (its
// id) or key is in the state returned is Returned, adopted again only should Terraform die
// before saving it; a row whose submission ran nothing for sure (never sent, or refused before
// running) is removed; any other entry (an unknown outcome, an adopted entry whose row this
// apply did not reach) is kept for the next run.
func (b *batchJournal) end(ctx context.Context, rows map[string]*batchRow) {
	if !b.on() {
		return
	}
	b.flush(ctx)
	var returned, removed []string
	b.mu.Lock()
	for rowKey, e := range b.entries {
		row := rows[rowKey]
		switch {
		case row != nil && row.Key == e.key && (row.ID != "" || row.Status == batchRowUnknown):
			returned = append(returned, e.key)
		case e.settled || !e.sent:
			removed = append(removed, e.key)
		}
	}
	b.mu.Unlock()
	if err := b.j.Returned(returned...); err != nil {
		logWarn(ctx, "updating the journal failed", map[string]any{"error": err.Error()})
	}
	if err := b.j.Remove(removed...); err != nil {
		logWarn(ctx, "updating the journal failed", map[string]any{"error": err.Error()})
	}
}

// leftovers claims the entries of this batch's group that no row adopted: submissions an earlier
// run of the batch made for rows whose values changed, or that were removed, before this apply.
// The rows run with their new values; each leftover job is named in a warning, canceled when
// cancel_on_destroy (as a changed or removed row's job state holds is), and its entry dropped, so
// that nothing adopts it later. Only an apply that reached every row looks: one cut short has not
// had every row adopt.
func (e *batchEngine) leftovers(ctx context.Context, b *batchJournal) {
	if !b.on() || ctx.Err() != nil {
		return
	}
	for _, row := range e.rows {
		if row.Status == batchRowNotSubmitted {
			return
		}
	}
	left, err := b.j.ClaimGroup(journalKindBatchRow, b.group)
	if err != nil {
		logWarn(ctx, "reading the journal's leftover rows failed", map[string]any{"error": err.Error()})
		return
	}
	if len(left) == 0 {
		return
	}
	keys := make([]string, len(left))
	var wg sync.WaitGroup
	sem := make(chan struct{}, e.maxInFlight)
	for i, entry := range left {
		keys[i] = entry.Key
		logWarn(ctx, "journaled batch row no longer configured", map[string]any{"idempotency_key": entry.Key, "job_id": entry.ID})
		row := &batchRow{ID: entry.ID, Key: entry.Key, Status: "canceled"}
		if entry.ID == "" {
			e.note(func(n *batchNews) { n.leftovers = append(n.leftovers, leftoverNote{row: row}) })
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			e.note(func(n *batchNews) { n.leftovers = append(n.leftovers, e.settleLeftover(ctx, row)) })
		}()
	}
	wg.Wait()
	if err := b.j.Remove(keys...); err != nil {
		logWarn(ctx, "updating the journal failed", map[string]any{"error": err.Error()})
	}
}

// leftoverNote is a job of an earlier run of the batch that no configured row adopted.
type leftoverNote struct {
	row      *batchRow
	status   string // as last read; "" when not read
	canceled bool
	err      error
}

// settleLeftover reads a leftover job and cancels it when it still runs and cancel_on_destroy.
func (e *batchEngine) settleLeftover(ctx context.Context, row *batchRow) leftoverNote {
	note := leftoverNote{row: row}
	job, err := e.data.client.GetJob(ctx, row.ID)
	if client.Gone(err) {
		note.status = "gone"
		return note
	}
	if err != nil {
		note.err = err
		return note
	}
	note.status = job.Status
	if job.Terminal() || !e.cancelRuns {
		return note
	}
	if _, err := e.data.client.CancelJob(ctx, job); err != nil && !client.Gone(err) {
		note.err = err
		return note
	}
	note.canceled = true
	return note
}

// describeLeftover is a leftover's line in the warning.
func describeLeftover(n leftoverNote, cancelRuns bool) string {
	r := n.row
	switch {
	case r.ID == "":
		return fmt.Sprintf("Idempotency-Key %s (no id came back: a job may exist that cannot be named)", r.Key)
	case n.err != nil:
		return fmt.Sprintf("job %s (Idempotency-Key %s): %v", r.ID, r.Key, n.err)
	case n.canceled:
		return fmt.Sprintf("job %s (Idempotency-Key %s), %s: canceled", r.ID, r.Key, n.status)
	case !cancelRuns && !client.JobTerminal(n.status) && n.status != "gone":
		return fmt.Sprintf("job %s (Idempotency-Key %s), %s: left running (cancel_on_destroy is off)", r.ID, r.Key, n.status)
	}
	return fmt.Sprintf("job %s (Idempotency-Key %s), %s", r.ID, r.Key, n.status)
}

// forgetBatch removes a destroyed batch's entries: its group's and those of the ids state holds.
func (d *providerData) forgetBatch(ctx context.Context, id, outputDir string, rows batchHeld) {
	sj := d.journalForBatch(outputDir)
	if sj == nil {
		return
	}
	j, err := sj.open()
	if err == nil {
		err = j.RemoveGroup(journalKindBatchRow, id)
	}
	if err == nil {
		var ids []string
		for _, res := range rows.results {
			if v := res.ID.ValueString(); v != "" {
				ids = append(ids, v)
			}
		}
		err = j.RemoveIDs(ids...)
	}
	if err != nil {
		logWarn(ctx, "removing a destroyed batch from the journal failed", map[string]any{"error": err.Error(), "id": id})
	}
}

// journalsByPlace holds the journals opened for batches, by directory or URL.
type journalsByPlace struct {
	mu sync.Mutex
	m  map[string]*submissionJournal
}

// batchJournalDir is the directory under a batch's output prefix that holds its journal when
// the outputs go to a bucket: <output prefix>/.svc-journal (the journal's objects under
// .svc-journal/journal/). Outputs are never named so: a row's outputs go under its own name.
const batchJournalDir = ".svc-journal"

// batchJournalAt is the journal a batch whose outputs go to outputDir submits through, given
// the provider's journal (providerJournal, "" when off) and whether the journal setting or
// SVC_JOURNAL chose it (given). A batch writing into a bucket journals into that bucket, so that
// a fresh runner, which has neither the dead runner's disk nor its state, adopts what the dead
// one submitted; a journal chosen by the setting or the environment (journal = "" included)
// wins, as does the default directory for a batch writing into a directory.
func batchJournalAt(outputDir, providerJournal string, given bool) string {
	if given || outputDir == "" || !bucket.IsURL(outputDir) {
		return providerJournal
	}
	u, err := url.Parse(outputDir)
	if err != nil {
		return providerJournal // refused by the output_dir's own check before any submission
	}
	u.Path = path.Join("/", u.Path, batchJournalDir)
	u.RawPath = ""
	return u.String()
}

// journalForBatch is the journal a batch whose outputs go to outputDir submits through (see
// batchJournalAt): nil when off. Each place is opened once per provider.
func (d *providerData) journalForBatch(outputDir string) *submissionJournal {
	if d == nil {
		return nil // the provider is not configured (a destroy may come without it): no journal
	}
	at := batchJournalAt(outputDir, d.journalPlace(), d.journalGiven)
	if d.journal != nil && at == d.journal.place.String() {
		return d.journal
	}
	return d.bucketJournals.get(at, d)
}

// checkBatchJournal is the plan-time check of the journal a batch writing into outputDir uses:
// nil when it can be used (or is off), else why not, naming it.
func (d *providerData) checkBatchJournal(outputDir string) error {
	if d == nil {
		return nil
	}
	at := batchJournalAt(outputDir, d.journalPlace(), d.journalGiven)
	if at == "" || d.journal != nil && at == d.journal.place.String() {
		return nil // off, or the provider's, checked when it was configured
	}
	return checkJournalDir(at)
}

// journalPlace is the provider's journal's directory or URL, "" when off.
func (d *providerData) journalPlace() string {
	if d.journal == nil {
		return ""
	}
	return d.journal.place.String()
}

func (js *journalsByPlace) get(at string, d *providerData) *submissionJournal {
	if at == "" {
		return nil
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	if js.m == nil {
		js.m = map[string]*submissionJournal{}
	}
	if js.m[at] == nil {
		js.m[at] = newSubmissionJournal(at, d.now)
	}
	return js.m[at]
}

package provider

import (
	"net/url"
	"path"
	"sync"

	"github.com/svc-org/terraform-provider-svc/internal/bucket"
)

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
	if given || !bucket.IsURL(outputDir) {
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
	if d.journal != nil && at == d.journal.dir {
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
	if at == "" || d.journal != nil && at == d.journal.dir {
		return nil // off, or the provider's, checked when it was configured
	}
	return checkJournalDir(at)
}

// journalPlace is the provider's journal's directory or URL, "" when off.
func (d *providerData) journalPlace() string {
	if d.journal == nil {
		return ""
	}
	return d.journal.dir
}

func (js *journalsByPlace) get(at string, d *providerData) *submissionJournal {
	if at == "" {
		return nil
	}
	if js == nil {
		return newSubmissionJournal(at, d.now) // provider data made without the cache (tests)
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

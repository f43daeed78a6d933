package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/svc-org/terraform-provider-svc/internal/canonicaljson"
	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/journal"
)

// journalEnv is the environment variable of the journal setting; set to "" it turns the journal
// off, as journal = "" does.
const journalEnv = "SVC_JOURNAL"

// journalDefaultDir is the journal's directory when neither the setting nor its environment
// variable names one: in Terraform's data directory (TF_DATA_DIR, else .terraform in the working
// directory, which Terraform's own .gitignore advice already leaves out of version control).
func journalDefaultDir() string {
	data := os.Getenv("TF_DATA_DIR")
	if data == "" {
		data = ".terraform"
	}
	return filepath.Join(data, "svc-journal")
}

// journalDir is the journal the journal setting v names (a directory, or a bucket URL
// s3://bucket/prefix?...): "" when the journal is off.
func journalDir(v types.String) string {
	if !v.IsNull() {
		return v.ValueString()
	}
	if env, ok := os.LookupEnv(journalEnv); ok {
		return env
	}
	return journalDefaultDir()
}

// journalGiven reports whether the journal was chosen (the setting, or its environment variable,
// even to turn it off) rather than left to its default.
func journalGiven(v types.String) bool {
	if !v.IsNull() {
		return true
	}
	_, ok := os.LookupEnv(journalEnv)
	return ok
}

// journalSource names where the journal's location came from, for errors.
func journalSource(v types.String) string {
	switch {
	case !v.IsNull():
		return "the provider's journal setting"
	case journalGiven(v):
		return "the environment variable " + journalEnv
	}
	return "the default"
}

// checkJournalDir says why dir (a directory or a bucket URL) cannot hold the journal, or nil: a
// journal that cannot be written is an error before anything is submitted, never a silent run
// without one. A bucket is checked with the credentials outputs use (the AWS SDK's chain): it
// exists, they may use it, an object can be written there, and the journal reads.
func checkJournalDir(dir string) error {
	return journal.Check(journal.PlaceOf(dir))
}

// submissionJournal is the provider's journal of submissions: nil when it is off. It is opened
// at the first submission, so that a plan only checks it.
type submissionJournal struct {
	place journal.Place
	now   func() time.Time
	once  sync.Once
	j     *journal.Journal
	err   error
}

func newSubmissionJournal(dir string, now func() time.Time) *submissionJournal {
	if dir == "" {
		return nil
	}
	return &submissionJournal{place: journal.PlaceOf(dir), now: now}
}

func (s *submissionJournal) open() (*journal.Journal, error) {
	s.once.Do(func() {
		s.j, s.err = journal.Open(s.place, s.now)
		if s.err == nil {
			openJournals.add(s.j)
		}
	})
	return s.j, s.err
}

// openJournals are the journals this process opened, closed by CloseJournals.
var openJournals journalSet

type journalSet struct {
	mu       sync.Mutex
	journals []*journal.Journal
}

func (js *journalSet) add(j *journal.Journal) {
	js.mu.Lock()
	defer js.mu.Unlock()
	js.journals = append(js.journals, j)
}

// CloseJournals closes the journals of submissions this process opened; the plugin calls it when
// Terraform has stopped it. Terraform stops its plugins once an apply's resources are done, so
// the ids the creates returned are then Terraform's to keep: they are never adopted again (so
// that `terraform state rm` then apply submits anew). A plugin that is killed never gets here,
// and its entries stay adoptable until a refresh sees their ids in state.
func CloseJournals() {
	openJournals.mu.Lock()
	defer openJournals.mu.Unlock()
	for _, j := range openJournals.journals {
		if err := j.Close(); err != nil {
			log.Printf("[WARN] closing the journal of submissions %s: %v", j.Path(), err)
		}
	}
	openJournals.journals = nil
}

// submissionDigest is the digest of what decides a submission of kind: its parts, JSON ones in
// their canonical spelling, so that formatting is never a different submission. It never
// includes a secret.
func submissionDigest(kind string, parts ...string) string {
	h := sha256.New()
	h.Write([]byte(kind))
	for _, p := range parts {
		if c, err := canonicaljson.Canonical([]byte(p)); err == nil {
			p = string(c)
		}
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// journaled is one submission as the journal knows it: the key it goes under, and the id an
// earlier run's submission under that key was answered with, when this one adopted it.
type journaled struct {
	s       *submissionJournal
	key     string
	adopted bool   // the entry was an earlier run's
	id      string // the id the earlier run was answered with ("" if none came)
}

// begin readies a submission of kind for digest, to go under key ("" draws one): it adopts an
// earlier run's entry of the same digest that never reached Terraform's state, else journals a
// new entry, durably, before anything is sent. An error means nothing may be sent.
func (s *submissionJournal) begin(kind, digest, key string) (journaled, error) {
	if key == "" {
		key = uuid.NewString()
	}
	if s == nil {
		return journaled{key: key}, nil
	}
	j, err := s.open()
	if err != nil {
		return journaled{}, err
	}
	if e, ok, err := j.Adopt(kind, digest); err != nil {
		return journaled{}, err
	} else if ok {
		return journaled{s: s, key: e.Key, adopted: true, id: e.ID}, nil
	}
	if err := j.Put(journal.Entry{Key: key, Kind: kind, Digest: digest}); err != nil {
		return journaled{}, err
	}
	return journaled{s: s, key: key}, nil
}

// answered records the id the service gave the submission. A failure is only logged: the key is
// journaled, and resending it finds the same job.
func (sub journaled) answered(ctx context.Context, id string) {
	if sub.s == nil || id == "" {
		return
	}
	if err := sub.s.j.SetIDs(map[string]string{sub.key: id}); err != nil {
		logWarn(ctx, "recording the submission's id in the journal failed", map[string]any{"error": err.Error(), "id": id})
	}
}

// end closes the submission's entry when the create returns: once its id is in the state handed
// to Terraform it is Returned (adopted again only should Terraform die before saving it); a
// submission that ran nothing for sure leaves nothing to adopt; any other outcome (unknown, a
// key the service says it has seen, a journaled id this run could not read) keeps it for the
// next run to resend under the same key, never for another create of this run.
func (sub journaled) end(ctx context.Context, idInState bool, submitErr error) {
	if sub.s == nil {
		return
	}
	var err error
	switch {
	case idInState:
		err = sub.s.j.Returned(sub.key)
	case submitErr != nil && sub.id == "" && ranNothing(submitErr):
		err = sub.s.j.Remove(sub.key)
	default:
		// Kept, claimed by this process until it ends: the next run adopts it, no other create
		// of this run does.
		return
	}
	if err != nil {
		logWarn(ctx, "updating the journal failed", map[string]any{"error": err.Error(), "idempotency_key": sub.key})
	}
}

// ranNothing reports whether a submission's error says for sure that nothing ran under its key:
// it never left, or the service refused it before running anything (credentials, a workflow or
// input it rejects, a route that does not exist, a queue that stayed full). Any other outcome
// may have run, and its key is kept.
func ranNothing(err error) bool {
	var notSent *client.NotSentError
	switch {
	case errors.As(err, &notSent), client.CredentialsRefused(err), client.RouteNotFound(err), client.DeclinedUntilDeadline(err):
		return true
	case client.InputRejected(err):
		return !client.HasCode(err, "idempotency_key_reuse")
	}
	return false
}

// handed marks the submission's entry as done with: its job was reported where it belongs.
func (sub journaled) handed(ctx context.Context) {
	if sub.s == nil {
		return
	}
	if err := sub.s.j.Handed(sub.key); err != nil {
		logWarn(ctx, "updating the journal failed", map[string]any{"error": err.Error(), "idempotency_key": sub.key})
	}
}

// drop removes the submission's entry: what it names can no longer be adopted.
func (sub journaled) drop(ctx context.Context) {
	if sub.s == nil {
		return
	}
	if err := sub.s.j.Remove(sub.key); err != nil {
		logWarn(ctx, "updating the journal failed", map[string]any{"error": err.Error(), "idempotency_key": sub.key})
	}
}

// confirm records that id is in Terraform's state (a refresh read it there): its entry is never
// adopted again.
func (s *submissionJournal) confirm(ctx context.Context, id string) {
	if s == nil || id == "" {
		return
	}
	j, err := s.open()
	if err == nil {
		err = j.HandedIDs(id)
	}
	if err != nil {
		logWarn(ctx, "recording a job in state in the journal failed", map[string]any{"error": err.Error(), "id": id})
	}
}

// forget removes the entries of a destroyed submission's id.
func (s *submissionJournal) forget(ctx context.Context, id string) {
	if s == nil || id == "" {
		return
	}
	j, err := s.open()
	if err == nil {
		err = j.RemoveID(id)
	}
	if err != nil {
		logWarn(ctx, "removing a destroyed submission from the journal failed", map[string]any{"error": err.Error(), "id": id})
	}
}

// journalError is the error detail of a journal that cannot be used for a submission.
func journalError(err error) string {
	return fmt.Sprintf("Nothing was submitted: the journal of submissions, which keeps what this apply submits so "+
		"that a run that dies before saving state never runs it twice, cannot be used.\n\n%v\n\n"+
		"Fix the directory or bucket the provider's journal setting names (default %s), or set journal = \"\" to run "+
		"without one.", err, journalDefaultDir())
}

// configureJournal is the journal's directory or bucket URL ("" when off, or when the setting
// is not known yet); one that cannot be written is an error naming it and where it was set (ok
// false).
func configureJournal(v types.String, diags *diag.Diagnostics) (dir string, ok bool) {
	if v.IsUnknown() {
		return "", true
	}
	dir = journalDir(v)
	if dir == "" {
		return "", true
	}
	if err := checkJournalDir(dir); err != nil {
		diags.AddAttributeError(path.Root("journal"), "Journal of submissions cannot be used",
			fmt.Sprintf("%v\n\n%s names it. The journal keeps what an apply submits so that a run that dies before saving "+
				"state never runs it twice; the provider does not run without it unless told: name a writable directory "+
				"or bucket (s3://bucket/prefix) in journal (or %s), or set journal = \"\" to turn it off. Nothing was submitted.",
				err, capitalize(journalSource(v)), journalEnv))
		return "", false
	}
	return dir, true
}

// capitalize upper-cases s's first letter (ASCII).
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

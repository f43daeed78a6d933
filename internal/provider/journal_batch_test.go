package provider

import (
	"strings"
	"testing"
	"time"

	"github.com/svc-org/terraform-provider-svc/internal/s3gw"
)

// A batch writing into a bucket journals into that bucket, under <output prefix>/.svc-journal,
// unless the journal setting or SVC_JOURNAL chose the journal (turning it off included); a batch
// writing into a directory uses the provider's journal.
func TestBatchJournalAt(t *testing.T) {
	t.Parallel()
	const q = "?endpoint=http://127.0.0.1:9000&region=us-east-1&use_path_style=true"
	tests := []struct {
		name, outputDir, provider string
		given                     bool
		want                      string
	}{
		{name: "a directory: the provider's", outputDir: "out", provider: ".terraform/svc-journal", want: ".terraform/svc-journal"},
		{name: "a bucket: in it", outputDir: "s3://outs/run/1" + q, provider: ".terraform/svc-journal", want: "s3://outs/run/1/.svc-journal" + q},
		{name: "a bucket's root", outputDir: "s3://outs?region=eu-west-1", provider: ".terraform/svc-journal", want: "s3://outs/.svc-journal?region=eu-west-1"},
		{name: "a bucket, the journal set", outputDir: "s3://outs/run", provider: "/var/j", given: true, want: "/var/j"},
		{name: "a bucket, the journal set to another bucket", outputDir: "s3://outs/run", provider: "s3://j/x", given: true, want: "s3://j/x"},
		{name: "a bucket, the journal turned off", outputDir: "s3://outs/run", provider: "", given: true, want: ""},
	}
	for _, tt := range tests {
		if got := batchJournalAt(tt.outputDir, tt.provider, tt.given); got != tt.want {
			t.Errorf("%s: batchJournalAt = %q; want %q", tt.name, got, tt.want)
		}
	}
}

// The batch's journal in its output bucket is checked at plan time like the provider's: a
// bucket that cannot be used is an error naming the journal's URL. Each place opens once.
func TestCheckBatchJournal(t *testing.T) {
	t.Parallel()
	b := newTestBucket(t, "outputs")
	down := s3gw.Start(t)
	down.CreateBucket("outputs")
	down.Stop()
	d := &providerData{now: time.Now, journal: newSubmissionJournal(".terraform/svc-journal", time.Now), bucketJournals: &journalsByPlace{}}
	tests := []struct {
		name, outputDir, wantErr string
	}{
		{name: "a bucket that can be used", outputDir: b.url("run")},
		{name: "an unreachable bucket", outputDir: down.URL("outputs", "run"), wantErr: "journal " + down.URL("outputs", "run/.svc-journal") + ": bucket \"outputs\" could not be reached"},
		{name: "a directory: the provider's journal, checked when configured", outputDir: t.TempDir()},
	}
	for _, tt := range tests {
		err := d.checkBatchJournal(tt.outputDir)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: checkBatchJournal = %v; want %q", tt.name, err, tt.wantErr)
		}
	}
	if j1, j2 := d.journalForBatch(b.url("run")), d.journalForBatch(b.url("run")); j1 == nil || j1 != j2 || j1 == d.journal {
		t.Errorf("journalForBatch: %p, %p; want one journal in the bucket, not the provider's %p", j1, j2, d.journal)
	}
	if j := d.journalForBatch(t.TempDir()); j != d.journal {
		t.Errorf("journalForBatch of a directory = %p; want the provider's %p", j, d.journal)
	}
}

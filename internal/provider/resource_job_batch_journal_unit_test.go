package provider

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
	"github.com/svc-org/terraform-provider-svc/internal/journal"
)

// What an apply's end does to each row's entry, seen by the run after a process that ended well
// (Close hands what was returned): a row whose id or key is in the state returned is never
// adopted again; an entry whose submission ran nothing for sure, or never left, is gone; any
// other (an adopted entry whose row this apply did not reach, a key sent without an answer not
// in state) is adopted by the next run.
func TestBatchJournalEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		entry     batchRowEntry
		row       *batchRow
		adoptable bool
	}{
		{name: "answered, id in state", entry: batchRowEntry{sent: true}, row: &batchRow{ID: "j1", Status: "running"}, adoptable: false},
		{name: "unknown outcome, key in state", entry: batchRowEntry{sent: true}, row: &batchRow{Status: batchRowUnknown}, adoptable: false},
		{name: "journaled, never sent", entry: batchRowEntry{}, row: &batchRow{Status: batchRowNotSubmitted}, adoptable: false},
		{name: "sent, refused before running", entry: batchRowEntry{sent: true, settled: true}, row: &batchRow{Status: batchRowNotSubmitted}, adoptable: false},
		{name: "adopted, not reached", entry: batchRowEntry{adopted: true, sent: true}, row: &batchRow{Status: batchRowNotSubmitted}, adoptable: true},
		{name: "sent, not in state", entry: batchRowEntry{sent: true}, row: &batchRow{Status: batchRowNotSubmitted}, adoptable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			j, err := journal.Open(journal.PlaceOf(dir), time.Now)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Put(journal.Entry{Key: "k", Kind: journalKindBatchRow, Digest: "d", Group: "g"}); err != nil {
				t.Fatal(err)
			}
			b := &batchJournal{j: j, group: "g", entries: map[string]*batchRowEntry{}, ids: map[string]string{}}
			b.written.L = &b.mu
			entry := tt.entry
			entry.key = "k"
			b.entries["r"] = &entry
			row := *tt.row
			if row.ID != "" || row.Status == batchRowUnknown {
				row.Key = "k"
			}
			b.end(context.Background(), map[string]*batchRow{"r": &row})
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			next, err := journal.Open(journal.PlaceOf(dir), time.Now)
			if err != nil {
				t.Fatal(err)
			}
			defer next.Close()
			got, _, err := next.AdoptEach(journalKindBatchRow, "g", []string{"d"})
			if err != nil {
				t.Fatal(err)
			}
			if adoptable := got[0].Key == "k"; adoptable != tt.adoptable {
				t.Fatalf("adoptable by the next run: %v; want %v", adoptable, tt.adoptable)
			}
		})
	}
}

// submitsAnew is runTask's choice: a row submits under a journaled key unless state holds its
// job (running or succeeded, same values) or its unanswered key.
func TestBatchTaskSubmitsAnew(t *testing.T) {
	t.Parallel()
	in := batchRowInput{key: "r", hash: "h"}
	tests := []struct {
		name string
		held *batchRow
		want bool
	}{
		{name: "new row", want: true},
		{name: "running, same values", held: &batchRow{ID: "j", Status: "running", InputHash: "h"}, want: false},
		{name: "succeeded, same values", held: &batchRow{ID: "j", Status: "succeeded", InputHash: "h"}, want: false},
		{name: "unknown outcome, same values: its key resent", held: &batchRow{Status: batchRowUnknown, Key: "k", InputHash: "h"}, want: false},
		{name: "running, values changed", held: &batchRow{ID: "j", Status: "running", InputHash: "old"}, want: true},
		{name: "failed, rerun", held: &batchRow{ID: "j", Status: "failed", InputHash: "h"}, want: true},
		{name: "not submitted", held: &batchRow{Status: batchRowNotSubmitted, InputHash: "h"}, want: true},
	}
	for _, tt := range tests {
		if got := (batchTask{in: in, held: tt.held}).submitsAnew(); got != tt.want {
			t.Errorf("%s: submitsAnew %v; want %v", tt.name, got, tt.want)
		}
	}
}

// In process (under -race in make test): an apply journals every row, each entry in the batch's
// group with its job's id; a destroy removes them all.
func TestAccJobBatch_rowsJournaled(t *testing.T) {
	t.Parallel()
	const rows = 50
	srv := newTestServer(t, emulator.Options{Workers: 8})
	dir := filepath.Join(t.TempDir(), "journal")
	config := providerConfig(srv, fmt.Sprintf("journal = %q", dir)) + fmt.Sprintf(`
resource "svc_job_batch" "b" {
  workflow      = %s
  rows          = %s
  max_in_flight = 8
}
`, batchSamplerTemplate(2), batchSeedRows(rows, 0))
	entries := func() []journal.Entry {
		j, err := journal.Open(journal.PlaceOf(dir), time.Now)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		all, err := j.Entries()
		if err != nil {
			t.Fatal(err)
		}
		return all
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(s *terraform.State) error {
					id := s.RootModule().Resources[batchRes].Primary.ID
					all := entries()
					ids := map[string]bool{}
					for _, e := range all {
						if e.Kind != journalKindBatchRow || e.Group != id || e.ID == "" {
							return fmt.Errorf("entry %+v; want a row of batch %s with its job's id", e, id)
						}
						ids[e.ID] = true
					}
					if len(all) != rows || len(ids) != rows || srv.JobCount() != rows {
						return fmt.Errorf("%d entries naming %d jobs, %d jobs on the server; want %d", len(all), len(ids), srv.JobCount(), rows)
					}
					return nil
				},
			},
			{
				Config:  config,
				Destroy: true,
				Check: func(*terraform.State) error {
					if all := entries(); len(all) != 0 {
						return fmt.Errorf("%d entries left after the destroy; want none", len(all))
					}
					return nil
				},
			},
		},
	})
}

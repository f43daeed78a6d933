package provider

import "sync"

// journalsByPlace holds the journals opened for batches, by directory or URL.
type journalsByPlace struct {
	mu sync.Mutex
	m  map[string]*submissionJournal
}

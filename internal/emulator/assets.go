package emulator

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"lukechampine.com/blake3"
)

// asset is a UUID-identified record over a blob held in memory.
type asset struct {
	id          string
	name        string
	contentType string
	data        []byte
	blob        *patternBlob // instead of data, for large generated assets
	hash        string       // "blake3:<hex>"
	jobID       string       // producing job, empty for uploaded assets
	nodeID      string
	createdAt   time.Time
}

func (a *asset) size() int64 {
	if a.blob != nil {
		return a.blob.size
	}
	return int64(len(a.data))
}

// content reads the asset's bytes; data is never mutated after creation, so no lock is needed.
func (a *asset) content() io.ReadSeeker {
	if a.blob != nil {
		return a.blob.reader()
	}
	return bytes.NewReader(a.data)
}

// assetJSON is the asset record served by GET /api/v2/assets/{id}.
type assetJSON struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	ContentType  string  `json:"content_type"`
	SizeBytes    int64   `json:"size_bytes"`
	Hash         *string `json:"hash"`
	URL          string  `json:"url"`
	URLExpiresAt string  `json:"url_expires_at"`
	JobID        *string `json:"job_id"`
}

func blake3Hash(data []byte) string {
	sum := blake3.Sum256(data)
	return "blake3:" + hex.EncodeToString(sum[:])
}

// PutAsset stores data as a new asset (as an upload would) and returns its id.
// Workflows can reference it as {"type":"core/ASSET","id":id} or, for LoadImage,
// by name.
func (s *Server) PutAsset(name, contentType string, data []byte) (id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.putAssetLocked(name, contentType, data, "", "").id
}

// putAssetLocked stores a copy of data; s.mu must be held.
func (s *Server) putAssetLocked(name, contentType string, data []byte, jobID, nodeID string) *asset {
	a := &asset{
		id:          uuid.NewString(),
		name:        name,
		contentType: contentType,
		data:        bytes.Clone(data),
		hash:        blake3Hash(data),
		jobID:       jobID,
		nodeID:      nodeID,
		createdAt:   s.now(),
	}
	s.assets[a.id] = a
	return a
}

// lookupAssetLocked returns a live asset, expiring its job first when due; s.mu must be held.
func (s *Server) lookupAssetLocked(id string) *asset {
	a := s.assets[id]
	if a == nil {
		return nil
	}
	if a.jobID != "" {
		if j := s.jobs[a.jobID]; j != nil {
			s.expireIfDueLocked(j, s.now())
		}
	}
	return s.assets[id]
}

// assetByNameLocked finds the newest asset with the given name; s.mu must be held.
func (s *Server) assetByNameLocked(name string) *asset {
	var best *asset
	for _, a := range s.assets {
		if a.name == name && (best == nil || a.createdAt.After(best.createdAt)) {
			best = a
		}
	}
	return best
}

// urlExpiry is when a content url signed at now expires: URLTTL later, rounded
// up to the second the signature carries.
func (s *Server) urlExpiry(now time.Time) time.Time {
	exp := now.Add(s.opts.URLTTL)
	if t := exp.Truncate(time.Second); t.Before(exp) {
		return t.Add(time.Second)
	}
	return exp
}

// contentLink is the signed content link of asset id valid until exp.
func (s *Server) contentLink(r *http.Request, id string, exp time.Time) string {
	e := strconv.FormatInt(exp.Unix(), 10)
	return s.link(r, "/api/v2/assets/"+id+"/content?expires="+e+"&sig="+s.sign(id, e))
}

func (s *Server) sign(id, expires string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(id + "\n" + expires))
	return hex.EncodeToString(m.Sum(nil))
}

func (s *Server) registerAssetRoutes() {
	s.route("GET /api/v2/assets/{id}", OpGetAsset, s.handleGetAsset)
	s.route("GET /api/v2/assets/{id}/content", OpAssetContent, s.handleAssetContent, noAuth())
}

func (s *Server) handleGetAsset(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	now := s.now()
	s.mu.Lock()
	a := s.lookupAssetLocked(id)
	if a == nil {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "not_found", "asset not found", map[string]any{"id": id})
		return
	}
	rec := assetJSON{
		ID:          a.id,
		Name:        a.name,
		ContentType: a.contentType,
		SizeBytes:   a.size(),
		Hash:        &a.hash,
	}
	if !s.hashShownLocked(a.jobID, now) {
		rec.Hash = nil
	}
	if a.jobID != "" {
		rec.JobID = &a.jobID
	}
	s.mu.Unlock()
	exp := s.urlExpiry(now)
	rec.URL, rec.URLExpiresAt = s.contentLink(r, id, exp), formatTime(exp)
	writeJSON(w, http.StatusOK, rec)
}

func (s *Server) handleAssetContent(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	q := r.URL.Query()
	expires, sig := q.Get("expires"), q.Get("sig")
	exp, err := strconv.ParseInt(expires, 10, 64)
	if err != nil || sig == "" || !hmac.Equal([]byte(sig), []byte(s.sign(id, expires))) {
		writeError(w, http.StatusForbidden, "forbidden", "invalid signature", nil)
		return
	}
	if signedURLExpired(s.now(), exp) {
		writeError(w, http.StatusForbidden, "forbidden", "signed url expired", nil)
		return
	}
	s.mu.Lock()
	a := s.lookupAssetLocked(id)
	s.mu.Unlock()
	if a == nil {
		writeError(w, http.StatusNotFound, "blob_not_found", "the asset's content is gone", map[string]any{"id": id})
		return
	}
	w.Header().Set("Content-Type", a.contentType)
	w.Header().Set("Cache-Control", "private, max-age=60")
	if s.opts.IgnoreRange {
		r.Header.Del("Range") // http.ServeContent then serves the whole content, 200
	}
	http.ServeContent(w, r, a.name, a.createdAt, a.content())
}

// signedURLExpired reports whether a URL signed to expire at the Unix second exp is past its
// life at now: from that second on, not a second later.
func signedURLExpired(now time.Time, exp int64) bool { return !now.Before(time.Unix(exp, 0)) }

// AssetHash is the blake3 hash ("blake3:<hex>") of an asset's content, "" for an unknown one,
// whether or not the server serves it yet: tests check downloads against it on a server whose
// records hide hashes.
func (s *Server) AssetHash(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.assets[id]; a != nil {
		return a.hash
	}
	return ""
}

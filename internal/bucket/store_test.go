package bucket

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"

	smithyhttp "github.com/aws/smithy-go/transport/http"

	"lukechampine.com/blake3"

	"github.com/svc-org/terraform-provider-svc/internal/s3gw"
)

func blake3Of(b []byte) string {
	sum := blake3.Sum256(b)
	return "blake3:" + hex.EncodeToString(sum[:])
}

func openStore(t *testing.T, raw string) *Store {
	t.Helper()
	loc, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestStoreCheck(t *testing.T) {
	t.Parallel()
	srv := s3gw.Start(t)
	srv.CreateBucket("there")
	ctx := context.Background()
	for _, tc := range []struct{ raw, err string }{
		{raw: srv.URL("there", "p")},
		{raw: srv.URL("missing", "p"), err: `bucket "missing" does not exist (s3://missing/p, with credentials from the environment variables AWS_ACCESS_KEY_ID`},
		{raw: srv.URL("there", "p") + "&anonymous=true", err: `bucket "there" refused the credentials (s3://there/p; no credentials (anonymous=true))`},
	} {
		err := openStore(t, tc.raw).Check(ctx)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Check(%s) = %v, want %q", tc.raw, err, tc.err)
		}
	}
}

// Credentials the server refuses are told apart although its answer to a HEAD has no body: an
// access key it does not know, and a secret that is not the key's, each named with where the
// credentials came from, the key by its last four characters only and the secret never. (Versity
// answers the HEAD of an unknown access key with 404, as for a missing bucket: the listing's
// code, XAdminUserNotFound, tells them apart.)
func TestStoreCheckRefusedCredentials(t *testing.T) {
	t.Parallel()
	unknownKey := s3gw.StartAs(t, "other-root-access", s3gw.SecretKey)
	unknownKey.CreateBucket("there")
	wrongSecret := s3gw.StartAs(t, s3gw.AccessKey, "another-secret-key-9876543210")
	wrongSecret.CreateBucket("there")
	const from = "credentials from the environment variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
	for _, tc := range []struct {
		srv  *s3gw.Server
		want string
	}{
		{unknownKey, `bucket "there" refused the credentials (s3://there/p; ` + from + `): the server does not know the access key ID ending in "cess" (XAdminUserNotFound`},
		{wrongSecret, `bucket "there" refused the credentials (s3://there/p; ` + from + `): the secret key is not the one of the access key ID ending in "cess" (the request's signature does not match) (SignatureDoesNotMatch`},
	} {
		err := openStore(t, tc.srv.URL("there", "p")).Check(context.Background())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check = %v, want %q", err, tc.want)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, s3gw.SecretKey) || strings.Contains(msg, s3gw.AccessKey) {
			t.Errorf("the error prints a credential: %s", msg)
		}
	}
}

func TestStorePutListStatDelete(t *testing.T) {
	t.Parallel()
	srv := s3gw.Start(t)
	srv.CreateBucket("bkt")
	ctx := context.Background()
	s := openStore(t, srv.URL("bkt", "runs/one"))
	content := bytes.Repeat([]byte("0123456789abcdef"), (partSize/16)*2+100) // three parts
	fill := func(w io.Writer) error { _, err := io.Copy(w, bytes.NewReader(content)); return err }

	// Known hash: verified while streaming, in the metadata from the start.
	got, err := s.Put(ctx, s.Key("row1", "big.bin"), Upload{AssetID: "a1", Blake3: blake3Of(content)}, fill)
	if err != nil || got.Size != int64(len(content)) || got.Blake3 != blake3Of(content) {
		t.Fatalf("Put = %+v, %v", got, err)
	}
	// No hash known before: set once the content is read.
	if _, err := s.Put(ctx, s.Key("row2", "small.txt"), Upload{AssetID: "a2"}, func(w io.Writer) error { _, err := w.Write([]byte("hi")); return err }); err != nil {
		t.Fatal(err)
	}
	// A wrong hash leaves no object.
	_, err = s.Put(ctx, s.Key("row3", "bad.bin"), Upload{AssetID: "a3", Blake3: blake3Of([]byte("other"))}, fill)
	if err == nil || !strings.Contains(err.Error(), "hashes to") {
		t.Fatalf("Put with the wrong hash = %v", err)
	}
	// A failing source leaves no object either.
	_, err = s.Put(ctx, s.Key("row3", "cut.bin"), Upload{AssetID: "a4"}, func(w io.Writer) error {
		_, _ = w.Write(content[:partSize+10])
		return errors.New("connection reset")
	})
	if err == nil {
		t.Fatal("Put of a failed source succeeded")
	}

	listed, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Object{"runs/one/row1/big.bin": {Size: int64(len(content))}, "runs/one/row2/small.txt": {Size: 2}}
	if len(listed) != len(want) || listed["runs/one/row1/big.bin"].Size != want["runs/one/row1/big.bin"].Size || listed["runs/one/row2/small.txt"].Size != 2 {
		t.Fatalf("List = %+v, want %+v", listed, want)
	}
	for key, meta := range map[string]map[string]string{
		"runs/one/row1/big.bin":   {MetaAssetID: "a1", MetaBlake3: blake3Of(content)},
		"runs/one/row2/small.txt": {MetaAssetID: "a2", MetaBlake3: blake3Of([]byte("hi"))},
	} {
		obj, ok, err := s.Stat(ctx, key)
		if err != nil || !ok || obj.Metadata[MetaAssetID] != meta[MetaAssetID] || obj.Metadata[MetaBlake3] != meta[MetaBlake3] {
			t.Errorf("Stat(%s) = %+v, %v, %v; want metadata %v", key, obj, ok, err, meta)
		}
	}
	if _, ok, err := s.Stat(ctx, "runs/one/row3/bad.bin"); ok || err != nil {
		t.Errorf("Stat of the refused upload = %v, %v", ok, err)
	}

	if err := s.Delete(ctx, []string{"runs/one/row1/big.bin", "runs/one/row9/never.bin"}); err != nil {
		t.Fatal(err)
	}
	listed, err = s.List(ctx)
	if err != nil || len(listed) != 1 || listed["runs/one/row2/small.txt"].Size != 2 {
		t.Fatalf("List after Delete = %+v, %v", listed, err)
	}
}

// Transient: no answer (a refused connection), 429 and 5xx may pass later; a refusal, a
// missing bucket, an end the caller chose or an error of the content do not.
func TestTransient(t *testing.T) {
	t.Parallel()
	answer := func(code int) error {
		return &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: errors.New("x")}
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"refused", fmt.Errorf("put: %w", &smithyhttp.RequestSendError{Err: syscall.ECONNREFUSED}), true},
		{"503", answer(503), true},
		{"429", answer(429), true},
		{"403", answer(403), false},
		{"404", answer(404), false},
		{"canceled", fmt.Errorf("put: %w", context.Canceled), false},
		{"hash", errors.New("the content hashes to x"), false},
		{"nil", nil, false},
	} {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("%s: Transient = %v, want %v", tc.name, got, tc.want)
		}
	}
	srv := s3gw.Start(t)
	if _, err := openStore(t, srv.URL("gone", "")).List(context.Background()); err == nil || Transient(err) {
		t.Errorf("listing a missing bucket: %v, transient %v; want a lasting error", err, Transient(err))
	}
}

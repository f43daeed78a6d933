package bucket

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
	"gocloud.dev/gcerrors"
)

// Metadata keys every object written here carries.
const (
	MetaAssetID = "svc-asset-id"
	MetaBlake3  = "blake3"
)

// Transfer settings. A part is held in memory until it is sent (so that it can be sent again),
// one part at a time per upload: an upload holds at most partSize whatever the file's size.
// 5 MiB is the smallest part S3 accepts.
const (
	partSize = 5 << 20
	// deleteBatch is the most keys one DeleteObjects request takes.
	deleteBatch = 1000
	// copyLimit is the largest object one CopyObject request copies.
	copyLimit = 5 << 30
)

// Retries: every request is resent after a refused or reset connection, a timeout, a 429 or a
// 5xx, with jittered exponential back-off up to maxBackoff, at most maxAttempts times (about a
// minute in all), with no retry quota shared between requests: a bucket unreachable for a while
// fails no upload that a later attempt would carry. A plan's checks try checkAttempts times.
const (
	maxAttempts   = 16
	maxBackoff    = 5 * time.Second
	checkAttempts = 3
)

// EndpointRegion is the region requests to an endpoint= server are signed for when neither the
// URL, the environment nor a profile names one: the one S3-compatible servers (MinIO, Ceph,
// Versity, R2) answer to unless configured otherwise. AWS itself has no such default: a bucket
// on AWS needs a region.
const EndpointRegion = "us-east-1"

// Store is an open bucket location.
type Store struct {
	Location
	client *s3.Client
	bucket *blob.Bucket
	creds  string // where the credentials came from, as a reader says it
	// keyHint names the access key without printing it; "" when there is none.
	keyHint string
	// checksums is when uploads carry a checksum (the AWS configuration's setting).
	checksums aws.RequestChecksumCalculation
}

// Open opens the bucket of loc with the AWS SDK's default credential chain and the region,
// endpoint and profile of its query. It sends no request.
func Open(ctx context.Context, loc Location) (*Store, error) {
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, loc.configQuery())
	if err != nil {
		return nil, fmt.Errorf("the AWS configuration for %s could not be read: %w", loc, err)
	}
	if cfg.Region == "" {
		if loc.query.Get("endpoint") == "" {
			return nil, fmt.Errorf("no region for %s: set region= in the URL, or AWS_REGION (or a region in the shared profile)", loc)
		}
		cfg.Region = EndpointRegion
	}
	cfg.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = maxAttempts
			o.MaxBackoff = maxBackoff
			o.RateLimiter = ratelimit.None
		})
	}
	pathStyle, _ := loc.boolParam("use_path_style", "s3ForcePathStyle")
	noHTTPS, _ := loc.boolParam("disable_https")
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = pathStyle
		o.EndpointOptions.DisableHTTPS = noHTTPS
	})
	b, err := s3blob.OpenBucket(ctx, client, loc.Bucket, &s3blob.Options{RequestChecksumCalculation: cfg.RequestChecksumCalculation})
	if err != nil {
		return nil, fmt.Errorf("bucket %s could not be opened: %w", loc, err)
	}
	s := &Store{Location: loc, client: client, bucket: b, creds: "no credentials", checksums: cfg.RequestChecksumCalculation}
	if anonymous, _ := loc.boolParam("anonymous"); anonymous {
		s.creds = "no credentials (anonymous=true)"
	} else if cfg.Credentials != nil {
		if c, err := cfg.Credentials.Retrieve(ctx); err == nil {
			s.creds = credentialSource(c.Source, loc.profile())
			s.keyHint = accessKeyHint(c.AccessKeyID)
		} else {
			s.creds = "no credentials found (environment variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a shared profile, or an instance or pod role)"
		}
	}
	return s, nil
}

// profile says which shared profile the AWS SDK reads: profile= in the URL, else AWS_PROFILE,
// else "default" (the SDK's own order).
func (l Location) profile() string {
	if p := l.query.Get("profile"); p != "" {
		return fmt.Sprintf("profile %q, from profile= in the URL", p)
	}
	if p := os.Getenv("AWS_PROFILE"); p != "" {
		return fmt.Sprintf("profile %q, from AWS_PROFILE", p)
	}
	return `profile "default"`
}

// accessKeyHint names an access key ID by its last four characters, as the AWS CLI's
// `configure list` does: enough to tell two keys apart, without printing the key.
func accessKeyHint(id string) string {
	if len(id) < 8 {
		return "access key ID " + strings.Repeat("*", len(id))
	}
	return fmt.Sprintf("access key ID ending in %q", id[len(id)-4:])
}

// Close releases the bucket.
func (s *Store) Close() error { return s.bucket.Close() }

// CredentialSource is where the credentials came from: environment variables, a shared
// profile, a role, or none found.
func (s *Store) CredentialSource() string { return s.creds }

// credentialSource says in words the AWS SDK's name of a credentials provider; profile says
// which shared profile it read, for credentials from one.
func credentialSource(source, profile string) string {
	switch {
	case source == "EnvConfigCredentials":
		return "credentials from the environment variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
	case strings.HasPrefix(source, "SharedConfigCredentials"):
		file := strings.TrimSpace(strings.TrimPrefix(source, "SharedConfigCredentials:"))
		return "credentials from a shared profile (" + profile + ", in " + file + ")"
	case source == "EC2RoleProvider":
		return "credentials of the instance's role"
	case source == "AssumeRoleProvider", source == "WebIdentityCredentials":
		return "credentials of an assumed role (" + source + ")"
	case source == "CredentialsEndpointProvider":
		return "credentials of the container's or pod's role"
	case source == "":
		return "credentials from an unnamed source"
	}
	return "credentials from " + source
}

// Check tells whether the bucket exists and the credentials may use it, with one request (and
// one more, a listing, to say why when it fails). The error names the bucket, where the
// credentials came from and, when they were refused, why.
func (s *Store) Check(ctx context.Context) error {
	_, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.Bucket)}, func(o *s3.Options) {
		o.RetryMaxAttempts = checkAttempts
	})
	if err == nil {
		return nil
	}
	head := status(err)
	if head != 400 && head != 401 && head != 403 && head != 404 {
		return fmt.Errorf("bucket %q could not be reached (%s, with %s): %s", s.Bucket, s.Location, s.creds, describe(err))
	}
	code, detail := s.listingRefusal(ctx)
	if code == "NoSuchBucket" || head == 404 && !credentialCodes[code] {
		return fmt.Errorf("bucket %q does not exist (%s, with %s)", s.Bucket, s.Location, s.creds)
	}
	why := fmt.Sprintf("HTTP %d, and the bucket gave no reason", head)
	if code != "" {
		why = refusalReason(code, s.keyHint) + " (" + detail + ")"
	}
	return fmt.Errorf("bucket %q refused the credentials (%s; %s): %s", s.Bucket, s.Location, s.creds, why)
}

// listingRefusal is the error code (and the code with its message) of one listing of at most one
// key, sent once; "" when it gave none. The answer to a HEAD has no body, so its error is only
// the status ("Forbidden") whether the access key is unknown, the secret wrong or the key not
// allowed, and some servers answer an unknown access key with 404 (Versity's
// XAdminUserNotFound) as if the bucket were missing: a listing's refusal has a body that tells
// them apart.
func (s *Store) listingRefusal(ctx context.Context) (code, detail string) {
	_, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(s.Bucket), MaxKeys: aws.Int32(1)}, func(o *s3.Options) {
		o.RetryMaxAttempts = 1
	})
	var ae smithy.APIError
	if err == nil || !errors.As(err, &ae) {
		return "", ""
	}
	return ae.ErrorCode(), describe(err)
}

// credentialCodes are the S3 error codes that refuse a request's credentials.
var credentialCodes = map[string]bool{
	"InvalidAccessKeyId": true, "XAdminUserNotFound": true, "SignatureDoesNotMatch": true, "AccessDenied": true,
	"AllAccessDisabled": true, "ExpiredToken": true, "TokenRefreshRequired": true, "InvalidToken": true,
	"RequestTimeTooSkewed": true, "AuthorizationHeaderMalformed": true,
}

// refusedWith says, for a request the bucket refused (401, 403), which credentials it refused:
// " (with <where they came from>)"; "" for any other failure, which they did not cause.
func (s *Store) refusedWith(err error) string {
	switch status(err) {
	case 401, 403:
		return " (with " + s.creds + ")"
	}
	return ""
}

// refusalReason says in words an S3 error code that refuses a request's credentials.
func refusalReason(code, keyHint string) string {
	key := "the credentials" // none, or anonymous
	if keyHint != "" {
		key = "the " + keyHint
	}
	switch code {
	case "InvalidAccessKeyId", "XAdminUserNotFound":
		return "the server does not know " + key
	case "SignatureDoesNotMatch":
		return "the secret key is not the one of " + key + " (the request's signature does not match)"
	case "AccessDenied", "AllAccessDisabled":
		return key + " may not use this bucket"
	case "ExpiredToken", "TokenRefreshRequired":
		return "the session token (AWS_SESSION_TOKEN or the role's) has expired"
	case "InvalidToken":
		return "the session token (AWS_SESSION_TOKEN or the role's) is not valid"
	case "RequestTimeTooSkewed":
		return "this machine's clock is too far from the server's for a signed request"
	case "AuthorizationHeaderMalformed":
		return "the request was signed for another region than the bucket's (set region= in the URL)"
	}
	return "the bucket refused " + key
}

// status is the HTTP status of a response error; 0 when there was no response.
func status(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// describe is an S3 error in one line: its code and message when the service sent them.
func describe(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		if msg := ae.ErrorMessage(); msg != "" {
			return ae.ErrorCode() + ": " + msg
		}
		return ae.ErrorCode()
	}
	return err.Error()
}

// Object is what a listing or a stat says of an object.
type Object struct {
	Size int64
	// ETag changes whenever the object is written again; "" when the service gave none.
	ETag     string
	Metadata map[string]string // only from Stat
}

// List lists every object under the location's prefix joined with sub (one request per 1,000
// objects), by key.
func (s *Store) List(ctx context.Context, sub ...string) (map[string]Object, error) {
	prefix := s.Key(sub...)
	if prefix != "" {
		prefix += "/"
	}
	found := map[string]Object{}
	it := s.bucket.List(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return found, nil
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s failed%s: %w", s.URL(prefix), s.refusedWith(err), err)
		}
		if !o.IsDir {
			var s3o s3types.Object
			etag := ""
			if o.As(&s3o) {
				etag = aws.ToString(s3o.ETag)
			}
			found[o.Key] = Object{Size: o.Size, ETag: etag}
		}
	}
}

// Stat is the size and metadata of the object at key; ok is false when there is none.
func (s *Store) Stat(ctx context.Context, key string) (obj Object, ok bool, err error) {
	a, err := s.bucket.Attributes(ctx, key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return Object{}, false, nil
	}
	if err != nil {
		return Object{}, false, fmt.Errorf("reading %s failed%s: %w", s.URL(key), s.refusedWith(err), err)
	}
	return Object{Size: a.Size, ETag: a.ETag, Metadata: a.Metadata}, true, nil
}

// Upload is what an upload is told of the content.
type Upload struct {
	AssetID string
	// Blake3 is the hash the content must have ("blake3:<hex>"); "" when none is known before.
	Blake3 string
	// Check, when set, is asked once the content is read whether it is the right one, with its
	// size and hash: its error aborts the upload (no object is left, an old one stays).
	Check func(size int64, blake3 string) error
}

// Uploaded is what an upload wrote.
type Uploaded struct {
	Size   int64
	Blake3 string
}

// Put streams the content fill writes into the object at key, with the asset id and the hash
// in its metadata, hashing it on the way. Nothing is held but one part. An object appears only
// when fill succeeded, the content has the hash up.Blake3 names (when it names one) and
// up.Check accepted it; otherwise the upload is aborted and any object already at key stays
// as it was. When no hash was known before, the object's metadata gets the hash once it is known
// (one copy of the object onto itself).
func (s *Store) Put(ctx context.Context, key string, up Upload, fill func(w io.Writer) error) (Uploaded, error) {
	wctx, abort := context.WithCancel(ctx)
	defer abort()
	meta := map[string]string{MetaAssetID: up.AssetID}
	if up.Blake3 != "" {
		meta[MetaBlake3] = up.Blake3
	}
	w, err := s.bucket.NewWriter(wctx, key, &blob.WriterOptions{
		ContentType: "application/octet-stream", Metadata: meta, BufferSize: partSize, MaxConcurrency: 1,
		BeforeWrite: s.onePartAtATime,
	})
	if err != nil {
		return Uploaded{}, fmt.Errorf("writing %s failed%s: %w", s.URL(key), s.refusedWith(err), err)
	}
	h := NewBlake3()
	counted := &countingWriter{w: io.MultiWriter(w, h)}
	got, err := s.finishContent(key, up, fill, counted, h)
	if err != nil {
		abort() // a Writer whose context ended before Close leaves no object
		_ = w.Close()
		return Uploaded{}, err
	}
	if err := w.Close(); err != nil {
		return Uploaded{}, fmt.Errorf("writing %s failed%s: %w", s.URL(key), s.refusedWith(err), err)
	}
	if up.Blake3 == "" {
		meta[MetaBlake3] = got.Blake3
		if err := s.setMetadata(ctx, key, got.Size, meta); err != nil {
			return got, err
		}
	}
	return got, nil
}

// onePartAtATime has an upload read its first part as it reads the others: the transfer
// manager otherwise reads up to its multipart threshold (16 MiB) with io.ReadAll before it
// chooses between one request and a multipart upload, holding 16 MiB and leaving 34 MiB of
// garbage per upload. gocloud.dev/blob hands the upload's transfer manager client to
// BeforeWrite and sets only its part size, concurrency and checksums, which are kept here.
func (s *Store) onePartAtATime(as func(any) bool) error {
	var tm *transfermanager.Client
	if !as(&tm) {
		return errors.New("the S3 upload's transfer manager is not reachable (gocloud.dev/blob/s3blob changed?)")
	}
	*tm = *transfermanager.New(s.client, func(o *transfermanager.Options) {
		o.PartSizeBytes = partSize
		o.MultipartUploadThreshold = partSize
		o.Concurrency = 1
		o.RequestChecksumCalculation = s.checksums
	})
	return nil
}

// finishContent runs fill into w and checks the content against the hash expected.
func (s *Store) finishContent(key string, up Upload, fill func(w io.Writer) error, w *countingWriter, h hash.Hash) (Uploaded, error) {
	if err := fill(w); err != nil {
		return Uploaded{}, err
	}
	got := Uploaded{Size: w.n, Blake3: "blake3:" + hex.EncodeToString(h.Sum(nil))}
	if up.Blake3 != "" && up.Blake3 != got.Blake3 {
		return Uploaded{}, fmt.Errorf("the content for %s hashes to %s, expected %s; nothing was written", s.URL(key), got.Blake3, up.Blake3)
	}
	if up.Check != nil {
		if err := up.Check(got.Size, got.Blake3); err != nil {
			return Uploaded{}, err
		}
	}
	return got, nil
}

// setMetadata replaces the metadata of the object at key by copying it onto itself. An object
// larger than one copy takes keeps the metadata it was written with.
func (s *Store) setMetadata(ctx context.Context, key string, size int64, meta map[string]string) error {
	if size > copyLimit {
		return nil
	}
	_, err := s.client.CopyObject(ctx, &s3.CopyObjectInput{
		Bucket: aws.String(s.Bucket), Key: aws.String(key), CopySource: aws.String(copySource(s.Bucket, key)),
		Metadata: meta, MetadataDirective: s3types.MetadataDirectiveReplace, ContentType: aws.String("application/octet-stream"),
	})
	if err != nil {
		return fmt.Errorf("setting the hash in the metadata of %s failed%s: %s", s.URL(key), s.refusedWith(err), describe(err))
	}
	return nil
}

// copySource is the CopySource of an object: bucket/key, each path segment escaped.
func copySource(bucketName, key string) string {
	segs := strings.Split(key, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return bucketName + "/" + strings.Join(segs, "/")
}

// Delete deletes the objects at keys, at most 1,000 per request. A key with no object is fine.
func (s *Store) Delete(ctx context.Context, keys []string) error {
	for start := 0; start < len(keys); start += deleteBatch {
		batch := keys[start:min(start+deleteBatch, len(keys))]
		ids := make([]s3types.ObjectIdentifier, len(batch))
		for i, k := range batch {
			ids[i] = s3types.ObjectIdentifier{Key: aws.String(k)}
		}
		out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(s.Bucket), Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return fmt.Errorf("deleting %d objects from %s failed%s: %s", len(batch), s.Location, s.refusedWith(err), describe(err))
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return fmt.Errorf("deleting %s failed: %s: %s (and %d more)", s.URL(aws.ToString(e.Key)), aws.ToString(e.Code), aws.ToString(e.Message), len(out.Errors)-1)
		}
	}
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Transient reports whether err may pass if the same request is sent again later: no answer
// came (a refused or reset connection, a timeout), or the service was busy or failing (429,
// 5xx). A refusal (403, a missing bucket) is not.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	switch code := status(err); {
	case code == 0:
		var sendErr *smithyhttp.RequestSendError
		var netErr net.Error
		return errors.As(err, &sendErr) || errors.As(err, &netErr)
	case code == 429, code >= 500:
		return true
	}
	return false
}

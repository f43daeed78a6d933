package provider

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/svc-org/terraform-provider-svc/internal/s3gw"
)

// testBucket is a bucket on a Versity S3 Gateway (bin/versitygw) of the test's own, started
// with the posix backend in a temporary directory on a loopback port, with the test
// credentials in the environment the provider's AWS SDK reads (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_REGION). The gateway stops when the test ends; Stop and Restart
// make it unreachable for a while, on the same port.
type testBucket struct {
	*s3gw.Server
	t    *testing.T
	name string
}

func newTestBucket(t *testing.T, name string) *testBucket {
	t.Helper()
	srv := s3gw.Start(t)
	srv.CreateBucket(name)
	return &testBucket{Server: srv, t: t, name: name}
}

// newTestBucketAs is a bucket on a gateway whose root user has other credentials than the ones
// the provider reads from the environment: it refuses them (another access key: unknown to it;
// the same access key with another secret: a wrong signature).
func newTestBucketAs(t *testing.T, name, access, secret string) *testBucket {
	t.Helper()
	srv := s3gw.StartAs(t, access, secret)
	srv.CreateBucket(name)
	return &testBucket{Server: srv, t: t, name: name}
}

// url is the bucket URL of prefix, as output_dir takes it.
func (b *testBucket) url(prefix string) string { return b.URL(b.name, prefix) }

// objects lists every object of the bucket: key -> size.
func (b *testBucket) objects() map[string]int64 {
	b.t.Helper()
	out := map[string]int64{}
	p := s3.NewListObjectsV2Paginator(b.Client(), &s3.ListObjectsV2Input{Bucket: aws.String(b.name)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			b.t.Fatalf("listing bucket %s: %v", b.name, err)
		}
		for _, o := range page.Contents {
			out[aws.ToString(o.Key)] = aws.ToInt64(o.Size)
		}
	}
	return out
}

// object is the content and metadata of an object.
func (b *testBucket) object(key string) (string, map[string]string, error) {
	out, err := b.Client().GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(b.name), Key: aws.String(key)})
	if err != nil {
		return "", nil, fmt.Errorf("reading %s: %w", key, err)
	}
	defer func() { _ = out.Body.Close() }()
	body, err := io.ReadAll(out.Body)
	return string(body), out.Metadata, err
}

func (b *testBucket) put(key, content string) {
	b.t.Helper()
	if _, err := b.Client().PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(b.name), Key: aws.String(key), Body: strings.NewReader(content)}); err != nil {
		b.t.Fatalf("writing %s: %v", key, err)
	}
}

func (b *testBucket) remove(keys ...string) error {
	for _, k := range keys {
		if _, err := b.Client().DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(b.name), Key: aws.String(k)}); err != nil {
			return fmt.Errorf("deleting %s: %w", k, err)
		}
	}
	return nil
}

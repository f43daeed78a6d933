package bucket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Small objects, read and written whole in one request each, for bookkeeping such as the journal
// of submissions (never outputs, which stream through Put).

// ErrTaken is the error of a PutNew whose key already holds an object.
var ErrTaken = errors.New("the key already holds an object")

// PutNew writes body at key only if no object is there (S3's conditional write, If-None-Match:
// *): of two writers of one key, exactly one succeeds and the other gets ErrTaken. A write the
// bucket completed is durable: S3 answers once the object is stored.
func (s *Store) PutNew(ctx context.Context, key string, body []byte) error {
	return s.putSmall(ctx, key, body, true)
}

// PutSmall writes body at key, replacing any object there.
func (s *Store) PutSmall(ctx context.Context, key string, body []byte) error {
	return s.putSmall(ctx, key, body, false)
}

func (s *Store) putSmall(ctx context.Context, key string, body []byte, onlyNew bool) error {
	in := &s3.PutObjectInput{
		Bucket: aws.String(s.Bucket), Key: aws.String(key), Body: bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))), ContentType: aws.String("application/x-ndjson"),
	}
	if onlyNew {
		in.IfNoneMatch = aws.String("*")
	}
	_, err := s.client.PutObject(ctx, in)
	switch code := status(err); {
	case err == nil:
		return nil
	// 412: the object exists. 409 (ConditionalRequestConflict): another conditional write of the
	// key was under way, and one of them must lose.
	case onlyNew && (code == 412 || code == 409):
		return ErrTaken
	}
	return fmt.Errorf("writing %s failed%s: %s", s.URL(key), s.refusedWith(err), describe(err))
}

// GetSmall reads the whole object at key, at most limit bytes; ok is false when there is none.
func (s *Store) GetSmall(ctx context.Context, key string, limit int64) (body []byte, ok bool, err error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String(key)})
	if err != nil {
		var nsk *s3types.NoSuchKey
		if errors.As(err, &nsk) || status(err) == 404 {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("reading %s failed%s: %s", s.URL(key), s.refusedWith(err), describe(err))
	}
	defer func() { _ = out.Body.Close() }()
	body, err = io.ReadAll(io.LimitReader(out.Body, limit+1))
	if err != nil {
		return nil, false, fmt.Errorf("reading %s failed: %w", s.URL(key), err)
	}
	if int64(len(body)) > limit {
		return nil, false, fmt.Errorf("%s is larger than %d bytes", s.URL(key), limit)
	}
	return body, true, nil
}

// ListPage lists at most max keys under prefix (a key prefix, used as given) that sort after
// startAfter, in order, in one request; more is whether keys are left after them.
func (s *Store) ListPage(ctx context.Context, prefix, startAfter string, maxKeys int32) (keys []string, more bool, err error) {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(s.Bucket), Prefix: aws.String(prefix), MaxKeys: aws.Int32(maxKeys)}
	if startAfter != "" {
		in.StartAfter = aws.String(startAfter)
	}
	out, err := s.client.ListObjectsV2(ctx, in)
	if err != nil {
		return nil, false, fmt.Errorf("listing %s failed%s: %s", s.URL(prefix), s.refusedWith(err), describe(err))
	}
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys, aws.ToBool(out.IsTruncated), nil
}

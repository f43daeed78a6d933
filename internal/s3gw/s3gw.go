// Package s3gw runs Versity S3 Gateway (bin/versitygw, built by `make versitygw`) for the tests:
// a real S3-compatible server on a loopback port, storing objects in a temporary directory
// (its posix backend). Only tests import it.
package s3gw

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The credentials of the server's root user, which the tests hand the provider through the
// environment variables the AWS SDK reads. They are the same for every server, so tests
// running in parallel in one process can share the environment.
const (
	AccessKey = "svc-test-access"
	SecretKey = "svc-test-secret-key-0123456789"
	Region    = "us-east-1"
)

// Server is one running gateway.
type Server struct {
	t              testing.TB
	root           string
	port           int
	access, secret string // of its root user
	iamDir         string // where it keeps its users ("" when it keeps none: the root user only)
	cmd            *exec.Cmd
	mu             sync.Mutex
}

// Start starts a gateway with an empty store, stopped when the test ends. It builds
// bin/versitygw first when the binary is missing.
func Start(t testing.TB) *Server { return StartAs(t, AccessKey, SecretKey) }

// StartAs starts a gateway whose root user has the given credentials: with another access key
// it does not know the test credentials of the environment, with the same access key and
// another secret it finds their signature wrong. Client still uses the root user.
func StartAs(t testing.TB, access, secret string) *Server {
	t.Helper()
	SetCredentialEnv()
	s := &Server{t: t, root: t.TempDir(), port: freePort(t), access: access, secret: secret}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

// StartWithReader starts a gateway with a bucket on which the test credentials of the
// environment are a read-only user's: a user of its own IAM (not its root user), whom a bucket
// policy lets list and read the bucket and nothing more.
func StartWithReader(t testing.TB, bucket string) *Server {
	t.Helper()
	SetCredentialEnv()
	s := &Server{t: t, root: t.TempDir(), iamDir: t.TempDir(), port: freePort(t), access: "svc-test-root", secret: "svc-test-root-secret-0123456789"}
	s.start()
	t.Cleanup(s.Stop)
	s.CreateBucket(bucket)
	admin := exec.CommandContext(context.Background(), binary(t), "admin", "--access", s.access, "--secret", s.secret,
		"--endpoint-url", s.Endpoint(), "create-user", "--access", AccessKey, "--secret", SecretKey, "--role", "user")
	if out, err := admin.CombinedOutput(); err != nil {
		t.Fatalf("creating the read-only user: %v: %s", err, out)
	}
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":[%q]},`+
		`"Action":["s3:ListBucket","s3:GetObject"],"Resource":["arn:aws:s3:::%s","arn:aws:s3:::%s/*"]}]}`, AccessKey, bucket, bucket)
	if _, err := s.Client().PutBucketPolicy(context.Background(), &s3.PutBucketPolicyInput{Bucket: aws.String(bucket), Policy: aws.String(policy)}); err != nil {
		t.Fatalf("letting the read-only user read %s: %v", bucket, err)
	}
	return s
}

// SetCredentialEnv sets the environment the AWS SDK reads its credentials and region from to
// the test credentials, for the whole process (tests in parallel cannot use t.Setenv), and
// turns off the instance-metadata lookup, which would wait for a service not there.
func SetCredentialEnv() {
	envOnce.Do(func() {
		for k, v := range map[string]string{
			"AWS_ACCESS_KEY_ID": AccessKey, "AWS_SECRET_ACCESS_KEY": SecretKey, "AWS_REGION": Region,
			"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		} {
			_ = os.Setenv(k, v)
		}
		_ = os.Unsetenv("AWS_PROFILE")
		_ = os.Unsetenv("AWS_SESSION_TOKEN")
	})
}

var envOnce sync.Once

// Endpoint is the server's address, http://127.0.0.1:<port>.
func (s *Server) Endpoint() string { return "http://127.0.0.1:" + strconv.Itoa(s.port) }

// URL is the bucket URL of bucket and prefix on this server, as the provider takes it.
func (s *Server) URL(bucket, prefix string) string {
	u := "s3://" + bucket
	if prefix != "" {
		u += "/" + prefix
	}
	return u + "?endpoint=" + s.Endpoint() + "&region=" + Region + "&use_path_style=true"
}

// Client is an S3 client of the server, for tests to look at or change the bucket by hand.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		Region: Region, BaseEndpoint: aws.String(s.Endpoint()), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(s.access, s.secret, ""),
	})
}

// CreateBucket creates an empty bucket.
func (s *Server) CreateBucket(name string) {
	s.t.Helper()
	if _, err := s.Client().CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		s.t.Fatalf("creating bucket %s: %v", name, err)
	}
}

// Stop stops the server (its store stays); stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	s.cmd = nil
}

// Restart starts the stopped server again on the same port, with the same store.
func (s *Server) Restart() {
	s.Stop()
	s.start()
}

func (s *Server) start() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	bin := binary(s.t)
	args := []string{"--port", "127.0.0.1:" + strconv.Itoa(s.port), "--access", s.access, "--secret", s.secret, "--region", Region, "--quiet"}
	if s.iamDir != "" {
		args = append(args, "--iam-dir", s.iamDir)
	}
	cmd := exec.CommandContext(context.Background(), bin, append(args, "posix", s.root)...)
	cmd.Stderr = os.Stderr // its banner (stdout) says nothing a test needs
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("starting %s: %v", bin, err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(30 * time.Second)
	for {
		d := net.Dialer{Timeout: time.Second}
		c, err := d.DialContext(context.Background(), "tcp", "127.0.0.1:"+strconv.Itoa(s.port))
		if err == nil {
			_ = c.Close()
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("versitygw did not listen on port %d within 30 s: %v", s.port, err)
		}
		time.Sleep(20 * time.Millisecond) // a process starting, not the service under test
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary is bin/versitygw of the repository, built by scripts/build-versitygw.sh (as
// `make versitygw` does) when it is missing or another version, once per test process. Tests
// never skip for want of it: a build that fails fails the test, naming the make target.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := repoRoot()
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(root, "bin", "versitygw")
		// Several test processes (one per package) may get here at once: one builds.
		lock, err := os.OpenFile(filepath.Join(root, "bin", ".versitygw.lock"), os.O_CREATE|os.O_RDWR, 0o644)
		if errors.Is(err, os.ErrNotExist) {
			if err = os.MkdirAll(filepath.Join(root, "bin"), 0o755); err == nil {
				lock, err = os.OpenFile(filepath.Join(root, "bin", ".versitygw.lock"), os.O_CREATE|os.O_RDWR, 0o644)
			}
		}
		if err != nil {
			buildErr = err
			return
		}
		defer func() { _ = lock.Close() }()
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
			buildErr = err
			return
		}
		cmd := exec.CommandContext(context.Background(), "bash", filepath.Join(root, "scripts", "build-versitygw.sh"), binPath)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("%w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("bin/versitygw, the S3 server of the bucket tests, could not be built (run `make versitygw`): %v", buildErr)
	}
	return binPath
}

// repoRoot is the directory of the module's go.mod, above the test's working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

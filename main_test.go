package main

import (
	"os"
	"strings"
	"testing"
)

func TestSilenceUnreadLogs(t *testing.T) {
	levels := []string{"TF_LOG_SDK", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_SDK_PROTO", "TF_LOG_PROVIDER_SVC"}
	tests := []struct {
		name    string
		env     map[string]string
		wantOff bool
	}{
		{name: "no log variable: nobody reads the lines", wantOff: true},
		{name: "TF_LOG set", env: map[string]string{"TF_LOG": "trace"}},
		{name: "TF_LOG_PROVIDER set", env: map[string]string{"TF_LOG_PROVIDER": "debug"}},
		{name: "an SDK level set", env: map[string]string{"TF_LOG_SDK_FRAMEWORK": "trace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, kv := range os.Environ() { // start from no TF_LOG* at all
				if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "TF_LOG") {
					t.Setenv(name, "") // restored after the test
					_ = os.Unsetenv(name)
				}
			}
			for _, name := range levels {
				t.Setenv(name, "")
				_ = os.Unsetenv(name)
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			silenceUnreadLogs()
			for _, name := range levels {
				got := os.Getenv(name)
				if want := tt.env[name]; !tt.wantOff && got != want {
					t.Errorf("%s = %q, want it left as %q", name, got, want)
				}
				if tt.wantOff && got != "off" {
					t.Errorf("%s = %q, want off", name, got)
				}
			}
		})
	}
}

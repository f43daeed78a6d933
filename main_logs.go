package main

import (
	"log"
	"os"
	"strings"
)

// silenceUnreadLogs turns the plugin's loggers off when no TF_LOG* variable is set. Terraform
// passes its environment to the plugin and throws a provider's log lines away unless TF_LOG or
// TF_LOG_PROVIDER is set; but the plugin's own loggers (the SDK's, the framework's and the
// provider's) take their level only from TF_LOG_SDK*, TF_LOG_PROVIDER_SVC and the like, and
// with none set they log at trace: every line, with its fields, is formatted as JSON and written
// to Terraform only to be discarded, a fifth of the plugin's CPU in a plan of many resources.
// Setting any TF_LOG* variable leaves every level as the SDK would set it.
func silenceUnreadLogs() {
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TF_LOG") {
			return
		}
	}
	// The SDK's subsystems (framework, protocol) check their own level before building a line's
	// fields, and an unset level there lets everything through to that point: set them too.
	for _, name := range []string{"TF_LOG_SDK", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_SDK_PROTO", "TF_LOG_PROVIDER_SVC"} {
		if err := os.Setenv(name, "off"); err != nil {
			log.Printf("[WARN] %s not set: %v", name, err)
		}
	}
}

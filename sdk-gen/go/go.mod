// Written by tools/pulumi-cli/gensdk (Pulumi's Go generator writes no go.mod for this schema).
module github.com/pulumi-posthog/pulumi-posthog/sdk/go

go 1.25

require github.com/pulumi/pulumi/sdk/v3 v3.274.1

// Command gensdk-dotnet writes the .NET SDK of the posthog Pulumi package from schema.json with Pulumi's .NET
// generator (github.com/pulumi/pulumi/pkg/v3/codegen/dotnet). That generator left pkg/v3 for the pulumi-dotnet
// repository (absent from pkg/v3 v3.229.0 on), whose modules the Go module proxy these machines reach refuses, so
// this module links pkg/v3 v3.225.1: the newest release the proxy serves that still holds it. Its own module
// because the other generators (../main.go) are linked at the CLI's version, v3.274.1. Run by tools/gen-sdk.mts.
//
// The project file targets net8.0 instead of the generator's net6.0 (see supportedFramework).
//
// The generator downloads logo.png (Pulumi's, for a schema without logoUrl); this tool answers that request with a
// placeholder of its own and makes no network request (see offline).
//
// Usage: gensdk-dotnet -schema schema.json -out DIR   (writes DIR/dotnet/, emptied first)
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/blang/semver"
	dotnetgen "github.com/pulumi/pulumi/pkg/v3/codegen/dotnet"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// defaultLogo is the URL the .NET generator downloads logo.png from when the schema has no logoUrl
// (pkg/v3@v3.225.1/codegen/dotnet/gen.go, getLogo, with http.Get).
const defaultLogo = "https://raw.githubusercontent.com/pulumi/pulumi/dbc96206bec722b7791a22ff50e895ab7c0abdc0/sdk/dotnet/pulumi_logo_64x64.png"

// offline answers the generator's one request, the default logo, with a placeholder written here (a 64×64 PNG of
// one colour: this machine reaches no web host, and a download would make the output depend on the network), and
// refuses every other URL, so that generation never touches the network.
type offline struct{}

func (offline) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.String() != defaultLogo {
		return nil, fmt.Errorf("gensdk-dotnet makes no network request (%s): give the schema no logoUrl", req.URL)
	}
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for y := 0; y < 64; y++ {
		for x := 0; x < 64; x++ {
			img.Set(x, y, color.RGBA{R: 0x1d, G: 0x4a, B: 0xff, A: 0xff})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"image/png"}}, Body: io.NopCloser(&buf),
		ContentLength: int64(buf.Len()), Request: req,
	}, nil
}

// noLoader refuses every external package: the posthog schema references none.
type noLoader struct{}

var errExternal = errors.New("the posthog schema references another package; gensdk-dotnet loads none")

func (noLoader) LoadPackage(string, *semver.Version) (*schema.Package, error) {
	return nil, errExternal
}
func (noLoader) LoadPackageV2(context.Context, *schema.PackageDescriptor) (*schema.Package, error) {
	return nil, errExternal
}

// bind binds the schema as the CLI and then the language host do (see ../main.go, bind).
func bind(raw []byte) (*schema.Package, error) {
	opts := schema.ValidationOptions{AllowDanglingReferences: true}
	once := func(data []byte) (*schema.Package, error) {
		var spec schema.PackageSpec
		if err := json.Unmarshal(data, &spec); err != nil {
			return nil, fmt.Errorf("schema is not a Pulumi package schema: %w", err)
		}
		pkg, diags, err := schema.BindSpec(spec, noLoader{}, opts)
		if err != nil {
			return nil, err
		}
		if diags.HasErrors() {
			return nil, fmt.Errorf("schema does not bind: %s", diags.Error())
		}
		return pkg, nil
	}
	pkg, err := once(raw)
	if err != nil {
		return nil, err
	}
	marshalled, err := pkg.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return once(marshalled)
}

// generatedFramework is the target framework the .NET generator writes into every project file (a constant of its
// template, with no language option: pkg/v3@v3.225.1/codegen/dotnet/templates.go, csharpProjectFileTemplateText);
// net8Framework is the one written instead: .NET 6 left Microsoft's support in November 2024, .NET 8 (LTS) is the
// oldest release still supported.
const (
	generatedFramework = "<TargetFramework>net6.0</TargetFramework>"
	net8Framework      = "<TargetFramework>net8.0</TargetFramework>"
)

// supportedFramework sets the project file's target framework to net8.0 (see generatedFramework); an error when the
// generator's project file no longer holds net6.0, so that a newer generator's choice is looked at, not overwritten.
func supportedFramework(files map[string][]byte) error {
	for name, data := range files {
		if filepath.Ext(name) != ".csproj" {
			continue
		}
		if !bytes.Contains(data, []byte(generatedFramework)) {
			return fmt.Errorf("%s has no %s: the generator changed; review its target framework", name, generatedFramework)
		}
		files[name] = bytes.Replace(data, []byte(generatedFramework), []byte(net8Framework), 1)
		return nil
	}
	return errors.New("the generator wrote no .csproj")
}

func run(schemaPath, out string) (int, error) {
	raw, err := os.ReadFile(schemaPath)
	if err != nil {
		return 0, fmt.Errorf("%w (run `npm run schema` to write schema.json)", err)
	}
	pkg, err := bind(raw)
	if err != nil {
		return 0, err
	}
	// As pulumi-language-dotnet's GeneratePackage: no extra files, no local dependencies.
	files, err := dotnetgen.GeneratePackage("pulumi-language-dotnet", pkg, nil, nil)
	if err != nil {
		return 0, err
	}
	if err := supportedFramework(files); err != nil {
		return 0, err
	}
	dir := filepath.Join(out, "dotnet")
	if err := os.RemoveAll(dir); err != nil {
		return 0, err
	}
	for name, data := range files {
		target := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return 0, err
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return 0, err
		}
	}
	return len(files), nil
}

func main() {
	schemaPath := flag.String("schema", "schema.json", "the package schema")
	out := flag.String("out", "sdk-gen", "the folder that receives dotnet/")
	flag.Parse()
	http.DefaultTransport = offline{}
	n, err := run(*schemaPath, *out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gensdk-dotnet: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("gensdk: dotnet: %d files in %s\n", n, filepath.Join(*out, "dotnet"))
}

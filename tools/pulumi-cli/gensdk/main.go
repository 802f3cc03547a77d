// Command gensdk writes the SDKs of the posthog Pulumi package for Go, Node.js and Python from schema.json,
// with Pulumi's own generators (github.com/pulumi/pulumi/pkg/v3/codegen/{go,nodejs,python}), the code that the
// language hosts run for `pulumi package gen-sdk` (the CLI hands the schema to pulumi-language-<lang>, whose
// GeneratePackage binds it and calls these functions: pkg/v3@v3.274.1/cmd/pulumi/packages/packages.go, GenSDK).
// Those hosts' own modules are not served by the Go module proxy these machines reach, so this tool links the
// generators directly. Run by tools/gen-sdk.mts (`npm run gen-sdk`).
//
// Usage: gensdk -schema schema.json -out DIR [-lang go,nodejs,python]
//
// For each language it writes the generator's files under DIR/<lang>/ (the folder is emptied first), and for Go,
// whose generator writes no go.mod for a schema without `supportPack`, a go.mod naming the module the schema's
// importBasePath implies (see goMod); tools/gen-sdk.mts then runs `go mod tidy` there, which completes its
// requirements and writes go.sum. The Node.js SDK is generated as a local SDK (see generate), which compiles itself
// when npm installs it. Exit status 1 with the binder's diagnostics when the schema does not bind.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver"
	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	nodejsgen "github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	pythongen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// pulumiSDKGo is the github.com/pulumi/pulumi/sdk/v3 version the Go SDK's go.mod requires (the CLI's version,
// tools/pulumi-cli/cli/go.mod).
const pulumiSDKGo = "v3.274.1"

// noLoader refuses every external package: the posthog schema references none, so a reference means the schema
// changed in a way this tool must learn about.
type noLoader struct{}

var errExternal = errors.New("the posthog schema references another package; gensdk loads none")

func (noLoader) LoadPackage(string, *semver.Version) (*schema.Package, error) {
	return nil, errExternal
}
func (noLoader) LoadPackageV2(context.Context, *schema.PackageDescriptor) (*schema.Package, error) {
	return nil, errExternal
}

func (noLoader) LoadPackageReference(string, *semver.Version) (schema.PackageReference, error) {
	return nil, errExternal
}

func (noLoader) LoadPackageReferenceV2(context.Context, *schema.PackageDescriptor) (schema.PackageReference, error) {
	return nil, errExternal
}

// bind binds a schema the way the CLI and then the language host do: the CLI binds schema.json
// (packages.BindSpec: AllowDanglingReferences), marshals the bound package to JSON and sends that to the host,
// which binds it again with the same options.
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

// goMod is the go.mod of the Go SDK, which sits one folder above the root package (sdk-gen/go/go.mod beside
// sdk-gen/go/posthog/): its module is the import base path without its last element (`…/sdk-gen/go/posthog` →
// `…/sdk-gen/go`, the repository's path of that folder), as the Go generator derives it for a package that supports
// packing (pkg/v3@v3.274.1/codegen/go/gen.go, ModuleAndImportPath); for this schema, without `supportPack`, it
// writes none. It names only the Pulumi Go SDK: `go mod tidy` (tools/gen-sdk.mts) adds the rest and go.sum.
func goMod(pkg *schema.Package) (string, error) {
	info, _ := pkg.Language["go"].(gogen.GoPackageInfo)
	base := info.ImportBasePath
	if base == "" {
		base = gogen.ExtractImportBasePath(pkg.Reference())
	}
	module := path.Dir(base)
	if info.ModulePath != "" {
		module = info.ModulePath
	}
	return fmt.Sprintf(
		"// Written by tools/pulumi-cli/gensdk (Pulumi's Go generator writes no go.mod for this schema) and\n"+
			"// completed by `go mod tidy`: `npm run gen-sdk` writes both.\n"+
			"module %s\n\ngo 1.25\n\nrequire github.com/pulumi/pulumi/sdk/v3 %s\n", module, pulumiSDKGo), nil
}

// generate returns the files of one language's SDK, by path relative to its folder.
func generate(lang string, raw []byte) (map[string][]byte, error) {
	pkg, err := bind(raw)
	if err != nil {
		return nil, err
	}
	switch lang {
	case "go":
		// As pulumi-language-go's GeneratePackage: no local dependencies.
		files, err := gogen.GeneratePackage("pulumi-language-go", pkg, nil)
		if err != nil {
			return nil, err
		}
		mod, err := goMod(pkg)
		if err != nil {
			return nil, err
		}
		files["go.mod"] = []byte(mod)
		// The plugin's name, version and download URL also at the module's root, where every Go language host looks
		// for them: the hosts before the `<module>/*/pulumi-plugin.json` lookup (as v3.62.0, the one this
		// repository builds: sdk/v3@v3.62.0/go/pulumi-language-go/main.go, readPulumiPluginJSON) look only in the
		// module's folder, its go/ and go/*/, so without it `pulumi about` lists no posthog and a program's
		// plugin requirements miss it.
		info, _ := pkg.Language["go"].(gogen.GoPackageInfo) // imported by GeneratePackage
		pluginJSON, ok := files[path.Join(path.Base(info.ImportBasePath), "pulumi-plugin.json")]
		if !ok {
			return nil, errors.New("the Go generator wrote no pulumi-plugin.json in the root package")
		}
		files["pulumi-plugin.json"] = pluginJSON
		return files, nil
	case "nodejs":
		// As pulumi-language-nodejs's GeneratePackage for `pulumi package gen-sdk --local` (localSDK true): the
		// package.json names `bin/index.js` as its main and compiles the TypeScript sources there when it is
		// installed (a postinstall script running tsc, with typescript and @types/node as dependencies), so that
		// `npm install` of this folder or of the tarball `npm pack` makes there gives a package Node.js can load
		// (pkg/v3@v3.274.1/codegen/nodejs/gen.go, genNPMPackageMetadata and genPostInstallScript). Without it the
		// package holds only .ts files and no main, which Node.js refuses to load from node_modules.
		return nodejsgen.GeneratePackage("pulumi-language-nodejs", pkg, nil, nil, true, noLoader{})
	case "python":
		return pythongen.GeneratePackage("pulumi-language-python", pkg, nil, noLoader{})
	}
	return nil, fmt.Errorf("unknown language %q: use go, nodejs or python", lang)
}

func write(dir string, files map[string][]byte) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		target := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	schemaPath := flag.String("schema", "schema.json", "the package schema")
	out := flag.String("out", "sdk-gen", "the folder that receives <lang>/ for each language")
	langs := flag.String("lang", "go,nodejs,python", "comma-separated languages: go, nodejs, python")
	flag.Parse()
	raw, err := os.ReadFile(*schemaPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gensdk: %v (run `npm run schema` to write schema.json)\n", err)
		os.Exit(1)
	}
	for _, lang := range strings.Split(*langs, ",") {
		files, err := generate(lang, raw)
		if err == nil {
			err = write(filepath.Join(*out, lang), files)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "gensdk: %s: %v\n", lang, err)
			os.Exit(1)
		}
		fmt.Printf("gensdk: %s: %d files in %s\n", lang, len(files), filepath.Join(*out, lang))
	}
}

// A Pulumi Go program of the posthog provider plugin, on the Go SDK generated from schema.json (sdk-gen/go, by
// `npm run gen-sdk`): a project, a dashboard restricted to collaborators, one collaborator on it (the member found
// with the function getMember, LookupMember in Go) and an invite. Run by test/plugin/go.test.ts through the real
// CLI against the emulator. Stack config: `memberEmail` (required) and `dashboardName` (default "Go KPIs").
package main

import (
	"github.com/pulumi-posthog/pulumi-posthog/sdk-gen/go/posthog"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		cfg := config.New(ctx, "")
		dashboardName := cfg.Get("dashboardName")
		if dashboardName == "" {
			dashboardName = "Go KPIs"
		}
		email := cfg.Require("memberEmail")
		member, err := posthog.LookupMember(ctx, &posthog.LookupMemberArgs{Email: &email})
		if err != nil {
			return err
		}
		web, err := posthog.NewProject(ctx, "web", &posthog.ProjectArgs{
			Name:     pulumi.String("Go web"),
			Timezone: pulumi.String("Europe/Paris"),
		})
		if err != nil {
			return err
		}
		kpis, err := posthog.NewDashboard(ctx, "kpis", &posthog.DashboardArgs{
			Name:             pulumi.String(dashboardName),
			ProjectId:        web.ID(),
			RestrictionLevel: pulumi.String("only-collaborators-can-edit"),
			Tags:             pulumi.StringArray{pulumi.String("go")},
		})
		if err != nil {
			return err
		}
		if _, err := posthog.NewDashboardCollaborator(ctx, "max-kpis", &posthog.DashboardCollaboratorArgs{
			ProjectId:   web.ID(),
			DashboardId: kpis.ID(),
			UserUuid:    pulumi.String(member.UserUuid),
		}); err != nil {
			return err
		}
		if _, err := posthog.NewInvite(ctx, "jane", &posthog.InviteArgs{
			TargetEmail: pulumi.String("jane.go@example.com"),
			Level:       pulumi.String("member"),
			SendEmail:   pulumi.Bool(false),
		}); err != nil {
			return err
		}
		ctx.Export("projectId", web.ID())
		ctx.Export("dashboardId", kpis.ID())
		ctx.Export("apiToken", web.ApiToken)
		return nil
	})
}

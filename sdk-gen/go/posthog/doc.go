// Manage a PostHog organization as code: domains and SAML SSO, invites, members, projects, dashboards, collaborators, sharing and batch-export pauses.
package posthog

package auth

import "context"

// WithTenant returns ctx acting for tenant: its principal (the zero one when
// ctx carries none) with Tenant replaced. Cross-tenant machinery (workers,
// the cron scheduler, sweepers) finds a row with a statement of its own and
// then works on the row's behalf with WithTenant(ctx, row's tenant), so that
// every store call it makes still filters by a tenant, never by none.
func WithTenant(ctx context.Context, tenant string) context.Context {
	p, _ := FromContext(ctx)
	p.Tenant = tenant
	return WithPrincipal(ctx, p)
}

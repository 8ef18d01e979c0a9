package httpapi

import (
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/httpapi/surface"
	"github.com/partnersim/partnersim/simulator/validate"
)

type vendorsJSON struct {
	Core *string `json:"core"`
	DBP  *string `json:"dbp"`
}

type institutionJSON struct {
	InstitutionID string      `json:"institution_id"`
	Name          string      `json:"name"`
	Vendors       vendorsJSON `json:"vendors"`
	CreatedAt     string      `json:"created_at"`
	Users         *int        `json:"users,omitempty"`
}

func renderInstitution(in *simulator.Institution) institutionJSON {
	return institutionJSON{InstitutionID: in.ID, Name: in.Name, Vendors: vendorsJSON{in.Vendors.Core, in.Vendors.DBP}, CreatedAt: simulator.FormatTime(in.CreatedAt)}
}

// handleCreateInstitution serves POST /_sandbox/institutions.
func handleCreateInstitution(tenants surface.Tenants, reader *bodyReader) echo.HandlerFunc {
	return func(c echo.Context) error {
		var name string
		var vendors simulator.Vendors
		err := reader.fields(c, func(b *validate.Object, _ *validate.Collector) {
			name = b.Str("name")
			vend := b.Object("vendors")
			vendors = simulator.Vendors{Core: nullableStr(vend, "core"), DBP: nullableStr(vend, "dbp")}
		})
		if err != nil {
			return err
		}
		in, err := tenants.CreateInstitution(c.Request().Context(), name, vendors)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusCreated, renderInstitution(in))
	}
}

// handleDeleteInstitution serves DELETE /_sandbox/institutions/:institution_id: the
// institution and everything of it (keys, users, members, orders, subscriptions, deliveries,
// its own virtual clock) are gone; 404 when there is no such institution.
func handleDeleteInstitution(tenants surface.Tenants) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := tenants.DeleteInstitution(c.Request().Context(), c.Param("institution_id")); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

// handleIssueKey serves POST /_sandbox/institutions/:institution_id/keys.
func handleIssueKey(tenants surface.Tenants, reader *bodyReader) echo.HandlerFunc {
	type response struct {
		KeyID         string            `json:"key_id"`
		Key           string            `json:"key"`
		Scopes        []simulator.Scope `json:"scopes"`
		InstitutionID string            `json:"institution_id"`
	}
	return func(c echo.Context) error {
		var scopes []simulator.Scope
		var desc string
		err := reader.fields(c, func(b *validate.Object, v *validate.Collector) {
			b.List("scopes").Each(func(_ int, s validate.Value) {
				scopes = append(scopes, simulator.Scope(s.Enum(surface.EnumStrings(simulator.Scopes)...)))
			})
			desc = optStr(b, "description", "")
			if utf8.RuneCountInString(desc) > surface.MaxKeyDescription {
				v.Add(validate.ValueError(validate.Loc{"body", "description"}, desc, fmt.Sprintf("a key's description has at most %d characters", surface.MaxKeyDescription)))
			}
		})
		if err != nil {
			return err
		}
		k, plain, err := tenants.IssueKey(c.Request().Context(), c.Param("institution_id"), scopes, desc)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusCreated, response{KeyID: k.ID, Key: plain, Scopes: k.Scopes, InstitutionID: k.InstitutionID})
	}
}

// handleRevokeKey serves DELETE /_sandbox/keys/:key_id.
func handleRevokeKey(tenants surface.Tenants) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := tenants.RevokeKey(c.Request().Context(), c.Param("key_id")); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

type memberJSON struct {
	InstitutionID string   `json:"institution_id"`
	CoreID        string   `json:"core_id"`
	CoreIDType    string   `json:"core_id_type"`
	DBPID         *string  `json:"dbp_id"`
	UserIDs       []string `json:"user_ids"`
	CreatedAt     string   `json:"created_at"`
}

// handleCreateMember serves POST /_sandbox/institutions/:institution_id/members.
func handleCreateMember(tenants surface.Tenants, reader *bodyReader) echo.HandlerFunc {
	return func(c echo.Context) error {
		m := &simulator.Member{InstitutionID: c.Param("institution_id")}
		err := reader.fields(c, func(b *validate.Object, _ *validate.Collector) {
			m.CoreID = b.Str("core_id")
			m.CoreIDType = b.Enum("core_id_type", simulator.CoreIDMemberNumber, simulator.CoreIDCIF)
			m.DBPID = nullableStr(b, "dbp_id")
			m.UserIDs = b.StrList("user_ids")
		})
		if err != nil {
			return err
		}
		if err := tenants.CreateMember(c.Request().Context(), m); err != nil {
			return err
		}
		return writeJSON(c, http.StatusCreated, memberJSON{InstitutionID: m.InstitutionID, CoreID: m.CoreID, CoreIDType: m.CoreIDType,
			DBPID: m.DBPID, UserIDs: m.UserIDs, CreatedAt: simulator.FormatTime(m.CreatedAt)})
	}
}

// handleCreateUser serves POST /_sandbox/institutions/:institution_id/users.
func handleCreateUser(tenants surface.Tenants, reader *bodyReader, clock *simulator.Clock) echo.HandlerFunc {
	type response struct {
		PlatformID    string `json:"platform_id"`
		UserAccountID string `json:"user_account_id"`
		InstitutionID string `json:"institution_id"`
	}
	return func(c echo.Context) error {
		var r simulator.UserRequest
		if err := reader.fields(c, func(b *validate.Object, v *validate.Collector) { r = userRequest(b, v) }); err != nil {
			return err
		}
		u := simulator.NewUser(c.Param("institution_id"), r, clock.Now())
		if err := tenants.CreateUser(c.Request().Context(), u); err != nil {
			return err
		}
		return writeJSON(c, http.StatusCreated, response{PlatformID: u.PlatformID, UserAccountID: u.UserAccountID, InstitutionID: u.InstitutionID})
	}
}

// storableTime reads an optional date-time field of b, nil when absent; a time the sandbox does
// not store (simulator.CheckStorable, decisions D17) is an error of that field, as it is in a
// fixture set.
func storableTime(b *validate.Object, v *validate.Collector, field string) *time.Time {
	t, ok := b.OptDateTime(field)
	if !ok {
		return nil
	}
	if err := simulator.CheckStorable(t); err != nil {
		v.Add(validate.ValueError(b.Loc().With(field), b.Field(field).Raw(), simulator.ErrorMessage(err)))
	}
	return &t
}

// userRequest reads a created user's fields: its dates, sessions, terms and one account per
// product with its cash and holdings.
func userRequest(b *validate.Object, v *validate.Collector) simulator.UserRequest {
	var r simulator.UserRequest
	r.UserAccountID = b.Str("user_account_id")
	r.CreatedAt = storableTime(b, v, "created_at")
	r.Sessions = optInt(b, "sessions", 0, validate.Ge(0), validate.Le(surface.MaxSessions))
	terms, _ := b.OptObject("terms_and_conditions")
	r.TermsAcceptedAt = storableTime(terms, v, "accepted_at")
	r.TermsVersion = optStr(terms, "version", "")
	seen := map[simulator.Product]bool{}
	for _, a := range objects(b, "accounts") {
		acct := simulator.AccountRequest{Product: simulator.Product(a.Enum("product", surface.Products...))}
		if st, ok := a.OptEnum("kyc_status", surface.KYCStatuses...); ok {
			acct.KYCStatus = simulator.KYCStatus(st)
		}
		acct.KYCApprovedAt = storableTime(a, v, "kyc_approved_at")
		acct.Cash = optDecimal(a, "cash", decimal.Zero)
		acct.Portfolio = optStr(a, "portfolio", "")
		for _, h := range objects(a, "holdings") {
			acct.Holdings = append(acct.Holdings, simulator.Holding{Symbol: h.Str("symbol"), Quantity: h.Decimal("quantity")})
		}
		if seen[acct.Product] && acct.Product != "" {
			v.Add(validate.ValueError(a.Loc().With("product"), string(acct.Product), "one account per product"))
		}
		seen[acct.Product] = true
		r.Accounts = append(r.Accounts, acct)
	}
	return r
}

// handleSetPrices serves PUT /_sandbox/institutions/:institution_id/prices.
func handleSetPrices(tenants surface.Tenants, reader *bodyReader) echo.HandlerFunc {
	return func(c echo.Context) error {
		var prices map[string]decimal.Decimal
		if err := reader.value(c, func(body validate.Value, _ *validate.Collector) { prices = body.DecimalMap() }); err != nil {
			return err
		}
		out, err := tenants.SetPrices(c.Request().Context(), c.Param("institution_id"), prices)
		if err != nil {
			return err
		}
		rendered := make(map[string]string, len(out))
		for k, p := range out {
			rendered[k] = simulator.FormatPrice(p)
		}
		return writeJSON(c, http.StatusOK, rendered)
	}
}

// handleRotateSecret serves POST /_sandbox/institutions/:institution_id/signing-secret/rotate.
func handleRotateSecret(tenants surface.Tenants, reader *bodyReader) echo.HandlerFunc {
	type response struct {
		SigningSecret  string `json:"signing_secret"`
		OverlapSeconds int    `json:"overlap_seconds"`
	}
	return func(c echo.Context) error {
		var overlap int
		err := reader.fields(c, func(b *validate.Object, _ *validate.Collector) {
			overlap = optInt(b, "overlap_seconds", 0, validate.Ge(0), validate.Le(surface.MaxOverlapSeconds))
		})
		if err != nil {
			return err
		}
		sec, err := tenants.RotateSecret(c.Request().Context(), c.Param("institution_id"), time.Duration(overlap)*time.Second)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, response{SigningSecret: sec, OverlapSeconds: overlap})
	}
}

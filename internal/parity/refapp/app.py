"""The reference app: a FastAPI service declaring the partner API's routes, parameters and
models as docs/decisions.md says (D2, D3, D4, D6, D8, D16), with trivial handlers.

What counts is what FastAPI, Starlette and pydantic do before a handler runs: routing, the
trailing-slash redirect, 405 and its Allow, authentication and scopes (as dependencies, D3),
and the 422 bodies. A handler only says that it was reached (header x-parity-handler), so the
parity driver can tell "FastAPI routed and validated this request" from every answer FastAPI
gives on its own. The driver (parity_test.go) runs it under uvicorn on loopback.

Keys come from the fixture file named by PARITY_KEYS (the default set's keys.json), so the
same keys open both this app and the sandbox.
"""

import datetime
import enum
import json
import os
from typing import Annotated, Optional

from fastapi import APIRouter, Body, Depends, FastAPI, HTTPException, Query, Security
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import JSONResponse, Response
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, HttpUrl


class Product(str, enum.Enum):
    securities = "securities"
    robo = "robo"
    crypto = "crypto"
    roth_ira = "roth_ira"


class KYCStatus(str, enum.Enum):
    pending = "pending"
    document_requested = "document_requested"
    approved = "approved"
    rejected = "rejected"
    closed = "closed"
    account_takeover = "account_takeover"


class PartnerUserAccountIdType(str, enum.Enum):
    platform = "platform"
    core = "core"
    dbp = "dbp"


class SortOrder(str, enum.Enum):
    asc = "asc"
    desc = "desc"


class UserSortKey(str, enum.Enum):
    created_at = "created_at"
    user_account_id = "user_account_id"


class Side(str, enum.Enum):
    buy = "buy"
    sell = "sell"


class OrderStatus(str, enum.Enum):
    pending = "pending"
    completed = "completed"
    canceled = "canceled"
    failed = "failed"


class EventType(str, enum.Enum):
    kyc = "kyc"
    transaction = "transaction"


class RevokeRequest(BaseModel):
    user_account_id: str
    user_account_id_type: PartnerUserAccountIdType


class SubscriptionRequest(BaseModel):
    event_type: EventType
    url: HttpUrl


def load_keys() -> dict[str, set[str]]:
    path = os.environ.get("PARITY_KEYS", "")
    if not path:
        return {}
    with open(path, encoding="utf-8") as f:
        return {k["key"]: set(k.get("scopes", [])) for k in json.load(f)}


KEYS = load_keys()

# FastAPI >= 0.122: a missing key is 401 "Not authenticated" with WWW-Authenticate: APIKey.
api_key_header = APIKeyHeader(name="x-api-key")


def scope(name: str):
    """The D3 checks after the header's presence: a known key (401), then its scope (403)."""

    def check(key: Annotated[str, Security(api_key_header)]) -> None:
        if key.startswith("live_"):
            raise HTTPException(401, "Invalid API key: live keys cannot be used in the sandbox")
        scopes = KEYS.get(key)
        if scopes is None:
            raise HTTPException(401, "Invalid API key")
        if name not in scopes:
            raise HTTPException(403, f"key does not have the required scope: {name}")

    return Depends(check)


def reached(name: str, status: int = 200) -> Response:
    """The handler's whole answer: it was reached, with everything FastAPI checked before."""
    if status == 204:
        return Response(status_code=204, headers={"x-parity-handler": name})
    return JSONResponse({"handler": name}, status_code=status, headers={"x-parity-handler": name})


# The sandbox serves no ReDoc and no OAuth2 redirect page; its /docs viewer is offline, with
# its files under /docs/{file} (D16).
app = FastAPI(title="Partner Investing Service", redoc_url=None, swagger_ui_oauth2_redirect_url=None)


@app.get("/docs/{file}", include_in_schema=False)
def docs_asset(file: str):
    return reached("docs_asset")


@app.get("/health")
def health():
    return {"status": "ok"}


def api_router(version: str) -> APIRouter:
    r = APIRouter(prefix="/" + version)

    @r.get("/health")
    def version_health():
        return {"status": "ok"}

    @r.get("/openapi.json", include_in_schema=False)
    def version_openapi():
        return reached("version_openapi")

    @r.get("/users/{user_account_id}/", dependencies=[scope("read:user")])
    def user_detail(user_account_id: str, user_account_id_type: PartnerUserAccountIdType):
        return reached("user_detail")

    @r.get("/users/", dependencies=[scope("read:user")])
    def user_list(
        user_account_id: Optional[str] = None,
        product: Optional[Product] = None,
        crypto_kyc_status: Optional[KYCStatus] = None,
        securities_kyc_status: Optional[KYCStatus] = None,
        roth_ira_kyc_status: Optional[KYCStatus] = None,
        robo_kyc_status: Optional[KYCStatus] = None,
        created_at_start: Optional[datetime.datetime] = None,
        created_at_end: Optional[datetime.datetime] = None,
        per_page: Annotated[int, Query(ge=1, le=100)] = 25,
        last_record_number: Annotated[int, Query(ge=0)] = 0,
        sort_order: SortOrder = SortOrder.desc,
        sort_key: UserSortKey = UserSortKey.created_at,
    ):
        return reached("user_list")

    @r.get("/orders/", dependencies=[scope("read:orders")])
    def order_list(
        user_account_id: Optional[str] = None,
        product: Optional[Product] = None,
        side: Optional[Side] = None,
        status: Optional[OrderStatus] = None,
        placed_at_start: Optional[datetime.datetime] = None,
        placed_at_end: Optional[datetime.datetime] = None,
        per_page: Annotated[int, Query(ge=1, le=100)] = 25,
        last_record_number: Annotated[int, Query(ge=0)] = 0,
        sort_order: SortOrder = SortOrder.desc,
    ):
        return reached("order_list")

    @r.get("/transactions/{transaction_id}/", dependencies=[scope("read:orders")])
    def transaction(transaction_id: str):
        return reached("transaction")

    @r.post("/sessions/revoke/", status_code=204, dependencies=[scope("manage:sessions")])
    def revoke_sessions(body: RevokeRequest):
        return reached("revoke_sessions", 204)

    hooks = [scope("manage:webhooks")]

    @r.get("/webhooks/subscriptions", dependencies=hooks)
    def list_subscriptions():
        return reached("list_subscriptions")

    @r.post("/webhooks/subscriptions", status_code=201, dependencies=hooks)
    def create_subscription(body: SubscriptionRequest):
        return reached("create_subscription", 201)

    @r.delete("/webhooks/subscriptions/{subscription_id}", status_code=204, dependencies=hooks)
    def delete_subscription(subscription_id: str):
        return reached("delete_subscription", 204)

    @r.post("/webhooks/subscriptions/{subscription_id}/test", dependencies=hooks)
    def test_subscription(subscription_id: str):
        return reached("test_subscription")

    return r


app.include_router(api_router("v1"))

@webhook
Feature: Test events
  Send Test Webhook makes one signed attempt of a sample event carrying is_test, with no
  retries, and reports the outcome (spec §2.8, §4.7, §6.1, §6.4). The sample's envelope is the
  one of decisions D8.

  @spec @rule:S6.1.2 @rule:S4.7.2
  Scenario: A test event is signed over t.body with the signing secret
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When I POST "/webhooks/subscriptions/{r1.kyc}/test"
    Then the response status is 200
    And "r1" receives a delivery
    And the delivery's signature header is well-formed
    And the delivery is signed with the signing secret

  @spec @rule:S2.13 @rule:S4.7.2 @rule:S6.1.1
  Scenario: A test event reports its outcome and carries is_test
    Given a receiver "r1"
    And "r1" is subscribed to "transaction" events
    When I POST "/webhooks/subscriptions/{r1.transaction}/test"
    Then the response status is 200
    And the JSON at "delivered" is true
    And the JSON at "response_status_code" is 200
    And the JSON at "event_id" is a string
    And I remember the JSON at "event_id" as "test_event"
    And "r1" receives a delivery
    And the event at "is_test" is true
    And the event at "event_id" is "{test_event}"
    And the delivery header "X-Partner-Webhook-Id" equals the event's "event_id"

  @assumed @rule:D8.14 @rule:D8.18 @rule:D8.24
  Scenario: A kyc test event has decisions D8's envelope and headers, and wall-clock times
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When I POST "/webhooks/subscriptions/{r1.kyc}/test"
    Then the response status is 200
    And "r1" receives a delivery
    And the delivery is a POST with the content type "application/json"
    And the delivery's signature header is well-formed
    And the delivery is signed with the signing secret
    And the delivery header "X-Partner-Webhook-Id" equals the event's "event_id"
    And the event at "event_type" is "kyc"
    And the event at "api_version" is "v1"
    And the event at "is_test" is true
    And the event at "created_at" is a timestamp
    And the event at "data.user_account_id" is a string
    And the event at "data.product" is a string
    And the event at "data.kyc_status" is a string
    And the event at "links.self" matches "^/v1/users/[^/?]+/[?]user_account_id_type=platform$"
    And the delivery's signature timestamp is within 300 seconds of now
    And the delivery's "created_at" is within 300 seconds of now

  @assumed @rule:D8.15 @rule:D8.24
  Scenario: A transaction test event has decisions D8's envelope, and wall-clock times
    Given a receiver "r1"
    And "r1" is subscribed to "transaction" events
    When I POST "/webhooks/subscriptions/{r1.transaction}/test"
    Then the response status is 200
    And "r1" receives a delivery
    And the event at "event_type" is "transaction"
    And the event at "api_version" is "v1"
    And the event at "is_test" is true
    And the event at "created_at" is a timestamp
    And the event at "data.transaction_id" is a string
    And the event at "data.status" is "completed"
    And the event at "data.user_account_id" is a string
    And the event at "data.product" is a string
    And the event at "links.self" matches "^/v1/transactions/[^/]+/$"
    And the delivery's signature timestamp is within 300 seconds of now
    And the delivery's "created_at" is within 300 seconds of now

  @spec @rule:D8.1
  Scenario: A failed test reports the callback's status code
    Given a receiver "r1" answering 500
    And "r1" is subscribed to "kyc" events
    When I POST "/webhooks/subscriptions/{r1.kyc}/test"
    Then the response status is 200
    And the JSON at "delivered" is false
    And the JSON at "response_status_code" is 500

  @spec @rule:S6.1.5
  Scenario Outline: Any 2xx answer acknowledges a test event
    Given a receiver "r1" answering <status>
    And "r1" is subscribed to "kyc" events
    When I POST "/webhooks/subscriptions/{r1.kyc}/test"
    Then the response status is 200
    And the JSON at "delivered" is true
    And the JSON at "response_status_code" is <status>

    Examples:
      | status |
      | 200    |
      | 204    |
      | 299    |

  @assumed @rule:D8.12
  Scenario Outline: A redirect is a failed attempt and is not followed
    Given a receiver "r1" answering <status>
    And "r1" is subscribed to "kyc" events
    When I POST "/webhooks/subscriptions/{r1.kyc}/test"
    Then the JSON at "delivered" is false
    And the JSON at "response_status_code" is <status>
    And "r1" has received exactly 1 delivery

    Examples:
      | status |
      | 300    |
      | 307    |

  @spec @rule:S4.7.1
  Scenario: A test event is attempted once and never retried
    Given a receiver "r1" answering 503
    And "r1" is subscribed to "kyc" events
    When I POST "/webhooks/subscriptions/{r1.kyc}/test"
    Then the JSON at "delivered" is false
    When the first retry of a delivery would have come due
    Then "r1" has received exactly 1 delivery

  @assumed @sandbox @rule:D8.1
  Scenario: A test to a callback that never answers has no status code
    Given an unreachable receiver "dead"
    And "dead" is subscribed to "kyc" events
    When I POST "/webhooks/subscriptions/{dead.kyc}/test"
    Then the response status is 200
    And the JSON at "delivered" is false
    And the JSON at "response_status_code" is absent

  @spec @rule:D8.17
  Scenario: Each test is a new event
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When I POST "/webhooks/subscriptions/{r1.kyc}/test"
    And I remember the JSON at "event_id" as "first"
    And I POST "/webhooks/subscriptions/{r1.kyc}/test"
    Then the JSON at "event_id" is not "{first}"
    And "r1" receives 2 deliveries

  @assumed @rule:D8.17
  Scenario: A kyc test event has decisions D8's envelope and a synthetic user
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When I POST "/webhooks/subscriptions/{r1.kyc}/test"
    Then "r1" receives a delivery
    And the delivery is a POST with the content type "application/json"
    And the event at "event_type" is "kyc"
    And the event at "api_version" is "v1"
    And the event at "created_at" is a timestamp
    And the event at "data.user_account_id" is "test_user"
    And the event at "data.kyc_status" is "approved"
    And the event at "links.self" matches "^/v1/users/usr_test_[^/]+/\?user_account_id_type=platform$"

  @assumed @rule:D8.17
  Scenario: A transaction test event names a synthetic transaction
    Given a receiver "r1"
    And "r1" is subscribed to "transaction" events
    When I POST "/webhooks/subscriptions/{r1.transaction}/test"
    Then "r1" receives a delivery
    And the event at "event_type" is "transaction"
    And the event at "data.transaction_id" starts with "txn_test_"
    And the event at "data.status" is "completed"
    And the event at "links.self" matches "^/v1/transactions/txn_test_[^/]+/$"
    When I follow the event's links.self
    Then the response status is 404

  @assumed @sandbox @rule:S6.1.3 @rule:D8.7
  Scenario: During a secret rotation a delivery carries one v1 entry per secret, new first
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When the signing secret is rotated with an overlap of 3600 seconds
    And I POST "/webhooks/subscriptions/{r1.kyc}/test"
    Then "r1" receives a delivery
    And the delivery's signature header has 2 v1 entries
    And the delivery's v1 entries carry the new secret's digest first and the previous secret's second
    And the delivery is signed with the signing secret
    And the delivery is signed with the previous signing secret

  @assumed @sandbox @rule:D8.7
  Scenario: A rotation without overlap signs with the new secret only
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When the signing secret is rotated with an overlap of 0 seconds
    And I POST "/webhooks/subscriptions/{r1.kyc}/test"
    Then "r1" receives a delivery
    And the delivery's signature header has 1 v1 entry
    And the delivery is signed with the signing secret

  @assumed @sandbox @rule:D8.11
  Scenario: A callback host is reached by name, through each loopback address it resolves to in turn
    Given a receiver "r1"
    And a callback host "multi" resolving to "::1, 127.0.0.1"
    And "r1" is subscribed to "kyc" events at the host "{multi}"
    When I POST "/webhooks/subscriptions/{r1.kyc}/test"
    Then the JSON at "delivered" is true
    And "r1" receives a delivery

  @assumed @rule:D8.11
  Scenario: A callback host named localhost, which resolves to loopback, receives its test event
    Given the deployment is a sandbox
    And the suite's receiver listens on loopback
    And a receiver "r2"
    And "r2" is subscribed to "kyc" events at the host "localhost"
    When I POST "/webhooks/subscriptions/{r2.kyc}/test"
    Then the JSON at "delivered" is true
    And "r2" receives a delivery

  @assumed @rule:D8.11
  Scenario: A callback on the IPv6 loopback address receives its test event
    Given the deployment is a sandbox
    And a receiver "r6" on the IPv6 loopback address
    And "r6" is subscribed to "kyc" events
    When I POST "/webhooks/subscriptions/{r6.kyc}/test"
    Then the JSON at "delivered" is true
    And "r6" receives a delivery

  @spec @rule:S6.1.6
  Scenario: A test event's links are built at its subscription's version, v1 while v2 is served
    Given the deployment serves version "v2"
    And a receiver "r1"
    And a receiver "r2"
    And "r1" is subscribed to "kyc" events
    And "r2" is subscribed to "kyc" events through "v2"
    When I POST "/webhooks/subscriptions/{r1.kyc}/test"
    Then "r1" receives a delivery
    And the event's links.self is built at version "v1"
    When I POST "/webhooks/subscriptions/{r2.kyc}/test"
    Then "r2" receives a delivery
    And the event's links.self is built at version "v2"

  @spec @rule:S6.2 @rule:S4.7.2
  Scenario: A kyc test event is shaped like a kyc event: event_id, data.kyc_status, data.product and links.self to a user
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When I POST "/webhooks/subscriptions/{r1.kyc}/test"
    Then "r1" receives a delivery
    And the event at "event_id" is a string
    And the event at "data.kyc_status" is one of "pending, document_requested, approved, rejected, closed, account_takeover"
    And the event at "data.product" is one of "securities, robo, crypto, roth_ira"
    And the event at "links.self" matches "^/v1/users/[^/?]+/[?]user_account_id_type=platform$"

  @spec @rule:S6.3.1 @rule:S6.3.3 @rule:S4.7.2
  Scenario: A transaction test event is shaped like a transaction event, and carries no balances, positions, quantities or amounts
    Given a receiver "r1"
    And "r1" is subscribed to "transaction" events
    When I POST "/webhooks/subscriptions/{r1.transaction}/test"
    Then "r1" receives a delivery
    And the event at "event_id" is a string
    And the event at "data.transaction_id" is a string
    And the event at "data.status" is "completed"
    And the event at "links.self" matches "^/v1/transactions/[^/?]+/$"
    And the event carries no balances, positions, quantities or amounts

  @assumed @sandbox @rule:D8.7
  Scenario: Once a rotation's overlap has passed, deliveries carry the new secret only
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When the signing secret is rotated with an overlap of 1 seconds
    Then test events to "r1" soon carry 1 v1 entry
    And the delivery is signed with the signing secret

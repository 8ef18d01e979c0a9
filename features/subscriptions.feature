Feature: Webhook subscriptions
  List, create, delete and test subscriptions (spec §2.7, §3.3, §4.5–4.7, §4.9, §9). Create is
  POST /webhooks/subscriptions → 201 and delete DELETE /webhooks/subscriptions/{id} → 204
  (decisions D8: the spec does not show them); the rules they must honour are the spec's.

  @spec @rule:S2.12 @rule:S4.6.2 @rule:D8.2
  Scenario: A subscription has the fields of the spec and is pinned to v1
    Given a receiver "r1"
    When I subscribe "r1" to "kyc" events
    Then the response status is 201
    And the JSON at "subscription_id" is a string
    And the JSON at "event_type" is "kyc"
    And the JSON at "url" is "{r1.url}"
    And the JSON at "api_version" is "v1"
    And the JSON at "enabled" is true
    And the JSON at "created_at" is a timestamp

  @spec @rule:S4.5
  Scenario: A new subscription is listed, enabled
    Given a receiver "r1"
    And "r1" is subscribed to "transaction" events
    When I GET "/webhooks/subscriptions"
    Then the response status is 200
    And the JSON at "subscriptions" is an array
    And the subscriptions listed hold "{r1.transaction}"
    And the JSON at "subscriptions.#(subscription_id=={r1.transaction}).event_type" is "transaction"
    And the JSON at "subscriptions.#(subscription_id=={r1.transaction}).url" is "{r1.url}"
    And the JSON at "subscriptions.#(subscription_id=={r1.transaction}).api_version" is "v1"
    And every element of the JSON at "subscriptions" has "enabled" equal to "true"

  @spec @rule:S3.4 @rule:S4.5
  Scenario: A deleted subscription is not listed
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When I DELETE "/webhooks/subscriptions/{r1.kyc}"
    And I GET "/webhooks/subscriptions"
    Then the response status is 200
    And the JSON at "subscriptions" contains no element with "subscription_id" equal to "{r1.kyc}"

  @spec @rule:S3.4 @rule:S4.7.4
  Scenario: A deleted subscription cannot receive test events
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When I DELETE "/webhooks/subscriptions/{r1.kyc}"
    And I POST "/webhooks/subscriptions/{r1.kyc}/test"
    Then the response status is 404
    And the JSON at "detail" is a string

  @spec @rule:S4.7.4
  Scenario: Testing an unknown subscription is 404
    When I POST "/webhooks/subscriptions/sub_does_not_exist/test"
    Then the response status is 404
    And the JSON at "detail" is a string

  @assumed @rule:D8.4
  Scenario: Delete answers 204, and deleting again 404
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When I DELETE "/webhooks/subscriptions/{r1.kyc}"
    Then the response status is 204
    And the response body is empty
    When I DELETE "/webhooks/subscriptions/{r1.kyc}"
    Then the response status is 404

  @spec @rule:S4.6.1
  Scenario: The signing secret is returned only by the subscribe that issued it
    # With a control plane the scenario's new institution subscribes first, and that subscribe
    # must return the secret; a deployment's institution issued its secret long ago
    # (--signing-secret). Either way, every later subscribe and every list omits it.
    Given my institution has its signing secret
    When I subscribe the URL "https://93.184.216.34/partnersim-contract/{scenario_token}" to "transaction" events
    Then the response status is 201
    And the JSON at "signing_secret" is absent
    When I GET "/webhooks/subscriptions"
    Then the JSON at "subscriptions.#.signing_secret" is an empty array

  @assumed @rule:D8.6
  Scenario: The signing secret is whsec_ and 32 random bytes in base64url
    Given my institution has its signing secret
    Then its signing secret matches "^whsec_[A-Za-z0-9_-]{43}$"

  @assumed @rule:D8.3
  Scenario: The same event type and URL cannot be subscribed twice
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When I subscribe "r1" to "kyc" events
    Then the response status is 409
    And the JSON at "detail" is a string
    When I subscribe "r1" to "transaction" events
    Then the response status is 201

  @spec @sandbox @rule:S5.5 @rule:D3.8
  Scenario: Another institution's subscriptions are invisible
    Given another institution "globex"
    And I act as "globex"
    And a receiver "rg"
    And "rg" is subscribed to "kyc" events
    And I act as my institution
    When I GET "/webhooks/subscriptions"
    Then the JSON at "subscriptions" contains no element with "subscription_id" equal to "{rg.kyc}"
    When I POST "/webhooks/subscriptions/{rg.kyc}/test"
    Then the answer is the 404 of another institution's id
    When I DELETE "/webhooks/subscriptions/{rg.kyc}"
    Then the answer is the 404 of another institution's id
    When I GET "/webhooks/subscriptions" with the key "globex"
    Then the JSON at "subscriptions" contains an element with "subscription_id" equal to "{rg.kyc}"

  @assumed @rule:S4.6.2 @rule:D2.6
  Scenario: A subscription made through v2 is pinned to v2
    Given the deployment serves version "v2"
    And a receiver "r1"
    When I subscribe "r1" to "kyc" events through "v2"
    Then the response status is 201
    And the JSON at "api_version" is "v2"
    When I GET "/webhooks/subscriptions"
    Then the JSON at "subscriptions.#(subscription_id=={r1.kyc}).api_version" is "v2"

  @spec @sandbox @rule:S4.7.3 @rule:D8.13
  Scenario: Test webhook refuses a callback that no longer resolves to a public address
    Given a callback host "hooks" resolving to "93.184.216.34"
    When I subscribe the URL "https://{hooks}/partner/webhooks" to "kyc" events
    Then the response status is 201
    Given the callback host "hooks" now resolves to "10.0.0.7"
    When I POST "/webhooks/subscriptions/{subscription_id}/test"
    Then the response status is 400
    And the JSON at "detail" is a string

  @assumed @sandbox @rule:D4.8 @rule:D8.13
  Scenario: The 400 of a test says the callback no longer resolves to a public address
    Given a callback host "hooks" resolving to "93.184.216.34"
    And I subscribe the URL "https://{hooks}/partner/webhooks" to "transaction" events
    And the callback host "hooks" now resolves to "93.184.216.34, 192.168.1.20"
    When I POST "/webhooks/subscriptions/{subscription_id}/test"
    Then the response is JSON:
      """
      {"detail":"callback URL no longer resolves to a public address"}
      """

  @assumed @rule:D8.10
  Scenario Outline: Create refuses callbacks on special-purpose addresses
    When I subscribe the URL "<url>" to "kyc" events
    Then the response status is 400
    And the detail is "callback URL does not resolve to a public address"

    Examples:
      | url                                        |
      | https://10.1.2.3/hook                      |
      | https://192.168.0.10/hook                  |
      | https://172.16.5.5/hook                    |
      | https://169.254.169.254/latest/meta-data   |
      | https://100.64.0.1/hook                    |
      | https://198.18.0.1/hook                    |
      | https://0.0.0.0/hook                       |
      | https://[fd00::1]/hook                     |
      | https://[fe80::1]/hook                     |
      | https://[::ffff:10.0.0.1]/hook             |
      | https://[::ffff:169.254.169.254]/hook      |
      | https://[64:ff9b::a00:1]/hook              |

  @assumed @sandbox @rule:D8.10
  Scenario: Create refuses a host name that resolves to any private address
    Given a callback host "mixed" resolving to "93.184.216.34, 10.0.0.8"
    When I subscribe the URL "https://{mixed}/hook" to "kyc" events
    Then the response status is 400
    And the detail is "callback URL does not resolve to a public address"

  @assumed @rule:D8.9
  Scenario: Plain http is refused for anything but loopback
    When I subscribe the URL "http://hooks.partner.example/webhooks" to "kyc" events
    Then the response status is 400
    And the detail is "callback URL must use https"

  @assumed @sandbox @rule:D8.9 @rule:D8.11
  Scenario Outline: Plain http is accepted only where every address is loopback; https wherever all are public or loopback
    Given a callback host "loop" resolving to "127.0.0.1"
    And a callback host "pub" resolving to "93.184.216.34"
    When I subscribe the URL "<url>" to "kyc" events
    Then the response status is 201
    And the JSON at "url" is "<url>"

    Examples:
      | url                        |
      | http://127.0.0.1:9/hook    |
      | http://[::1]:9/hook        |
      | http://localhost:9/hook    |
      | http://{loop}/hook         |
      | https://{loop}/hook        |
      | https://{pub}/hook         |
      | https://93.184.216.34/hook |
      | https://ops:s3cret@{pub}/hook |

  @assumed @sandbox @rule:D8.9
  Scenario Outline: Plain http to anything not wholly loopback is refused before the address rule
    Given a callback host "pub" resolving to "93.184.216.34"
    And a callback host "mixed" resolving to "127.0.0.1, 93.184.216.34"
    When I subscribe the URL "<url>" to "kyc" events
    Then the response status is 400
    And the detail is "callback URL must use https"

    Examples:
      | url                  |
      | http://{pub}/hook    |
      | http://{mixed}/hook  |
      | http://10.0.0.5/hook |

  @assumed @rule:D4.2 @rule:D8.8
  Scenario Outline: Bad subscription bodies are FastAPI's 422 items
    When I POST "/webhooks/subscriptions" with the raw body "<body>"
    Then the response status is 422
    And the response is a validation error naming "<field>"
    And the JSON at "detail.0.type" is "<type>"

    Examples:
      | body                                                           | field      | type        |
      | {\"event_type\":\"kyc\",\"url\":\"not a url\"}                 | url        | url_parsing |
      | {\"event_type\":\"kyc\",\"url\":\"hooks.example\"}             | url        | url_parsing |
      | {\"event_type\":\"kyc\",\"url\":\"https://exam%ple.com/x\"}    | url        | url_parsing |
      | {\"event_type\":\"kyc\",\"url\":\"https://[::ffff:1.2.3.256]/x\"} | url     | url_parsing |
      | {\"event_type\":\"kyc\",\"url\":\"ftp://hooks.example/x\"}     | url        | url_scheme  |
      | {\"event_type\":\"kyc\"}                                       | url        | missing     |
      | {\"event_type\":\"balance\",\"url\":\"https://hooks.example/x\"} | event_type | enum        |
      | {\"url\":\"https://hooks.example/x\"}                          | event_type | missing     |

  @assumed @rule:D4.2 @rule:D8.8
  Scenario: A host with a character no domain may hold is pydantic's url_parsing item
    When I POST "/webhooks/subscriptions" with JSON:
      """
      {"event_type":"kyc","url":"https://example com/x"}
      """
    Then the response is JSON:
      """
      {"detail":[{"type":"url_parsing","loc":["body","url"],"msg":"Input should be a valid URL, invalid international domain name","input":"https://example com/x","ctx":{"error":"invalid international domain name"}}]}
      """

  @assumed @rule:D4.2 @rule:D8.8
  Scenario: A callback URL may have 2,083 characters, pydantic's HttpUrl limit, and no more
    When I subscribe the URL "http://hooks.partner.example/" padded to 2083 characters to "kyc" events
    Then the response status is 400
    And the detail is "callback URL must use https"
    When I subscribe the URL "http://hooks.partner.example/" padded to 2084 characters to "kyc" events
    Then the response status is 422
    And the JSON at "detail.0.type" is "url_too_long"
    And the JSON at "detail.0.loc" is the JSON "[\"body\",\"url\"]"
    And the JSON at "detail.0.msg" is "URL should have at most 2083 characters"
    And the JSON at "detail.0.ctx" is the JSON "{\"max_length\":2083}"

  @assumed @rule:D4.10
  Scenario: A body nested beyond Python's recursion limit is FastAPI's 400, not a 422
    When I POST "/webhooks/subscriptions" with a JSON object nested 20000 levels deep
    Then the response is JSON:
      """
      {"detail":"There was an error parsing the body"}
      """
    And the response status is 400

  @assumed @rule:D17.1
  Scenario: A body of exactly 1 MiB is read whole; one byte more is 413
    When I POST "/webhooks/subscriptions" with the JSON "{\"event_type\":\"balance\",\"url\":\"https://hooks.example/x\"}" padded with spaces to 1048576 bytes
    Then the response status is 422
    And the JSON at "detail.0.type" is "enum"
    When I POST "/webhooks/subscriptions" with the JSON "{\"event_type\":\"balance\",\"url\":\"https://hooks.example/x\"}" padded with spaces to 1048577 bytes
    Then the response status is 413
    And the JSON at "detail" is a string

  @assumed @rule:D8.8
  Scenario: The url_scheme item is pydantic's
    When I POST "/webhooks/subscriptions" with JSON:
      """
      {"event_type":"kyc","url":"ftp://hooks.example/x"}
      """
    Then the response status is 422
    And the JSON at "detail.0.loc" has 2 elements
    And the JSON at "detail.0.msg" is "URL scheme should be 'http' or 'https'"
    And the JSON at "detail.0.input" is "ftp://hooks.example/x"

  @assumed @rule:S2.3 @rule:D4.2
  Scenario: An unknown event type is FastAPI's enum item
    When I POST "/webhooks/subscriptions" with JSON:
      """
      {"event_type":"balance","url":"https://hooks.example/x"}
      """
    Then the response is JSON:
      """
      {"detail":[{"type":"enum","loc":["body","event_type"],"msg":"Input should be 'kyc' or 'transaction'","input":"balance","ctx":{"expected":"'kyc' or 'transaction'"}}]}
      """

  @assumed @rule:D19.1
  Scenario Outline: A callback host pydantic's URL type refuses is its url_parsing item
    When I POST "/webhooks/subscriptions" with JSON:
      """
      {"event_type":"kyc","url":"<url>"}
      """
    Then the response status is 422
    And the JSON at "detail.0.type" is "url_parsing"
    And the JSON at "detail.0.ctx.error" is "invalid international domain name"

    Examples:
      | url                        | why                                             |
      | https://a\u05d0.com/       | Hebrew after Latin breaks the Bidi rule         |
      | https://\u0661.com/        | an Arabic-Indic digit first breaks the Bidi rule |
      | https://\u05d0.1/          | the Bidi rule, before any IPv4 reading          |
      | https://\u200d.com/        | a zero width joiner outside its context         |
      | https://\u2100/            | ACCOUNT OF maps to a/c, and / is no host's      |
      | https://\ufe6b/            | SMALL COMMERCIAL AT maps to @                   |

  @assumed @rule:D19.7
  Scenario: A lone surrogate is refused as pydantic refuses it, its input rendered null
    When I POST "/webhooks/subscriptions" with JSON:
      """
      {"event_type":"kyc","url":"https://1.2.3.4/\ud800"}
      """
    Then the response is JSON:
      """
      {"detail":[{"type":"string_unicode","loc":["body","url"],"msg":"Input should be a valid string, unable to parse raw data as a unicode string","input":null}]}
      """

  @assumed @rule:D19.9
  Scenario: A callback host that does not resolve is refused as such, not as a private address
    When I POST "/webhooks/subscriptions" with JSON:
      """
      {"event_type":"kyc","url":"https://nx.partnersim.invalid/hook"}
      """
    Then the response status is 400
    And the detail is "callback URL host does not resolve"

  @assumed @rule:D19.9
  Scenario: A control character in the userinfo is percent-encoded as pydantic does, not refused
    When I POST "/webhooks/subscriptions" with JSON:
      """
      {"event_type":"kyc","url":"https://a\u0003b@93.184.216.34/x"}
      """
    Then the response status is 201
    And I remember the JSON at "subscription_id" as "stray"
    When I DELETE "/webhooks/subscriptions/{stray}"
    Then the response status is 204

@assumed
Feature: Exposure of a sandbox
  What a sandbox answers, and to whom (decisions D18): a sandbox listening on loopback answers
  only requests naming it by a loopback Host (a page whose name re-resolves to 127.0.0.1 gets
  421), its DNS overrides take DNS host names only, its pages refuse framing and sniffing, its
  control plane reads bounded bodies, and a callback address embedding an IPv4 address is judged
  by that address. Loopback Hosts are answered however the sandbox listens, so that scenario
  needs only a sandbox key; refusing other Hosts holds only while it listens on loopback, which
  its control plane declares (the capability loopback_hosts).

  @sandbox @rule:D18.1 @rule:D18.7
  Scenario Outline: The control plane and the console refuse a Host that is not a loopback name, token or not
    Given the sandbox answers only loopback Hosts
    When I GET the control plane "<path>" with its token and the Host "<host>"
    Then the response status is 421
    And the response is JSON:
      """
      {"detail":"Misdirected Request"}
      """

    Examples:
      | path                   | host                         |
      | /_sandbox/capabilities | evil.example                 |
      | /_sandbox/institutions | rebind.attacker.example:8080 |
      | /_sandbox/ui/          | evil.example                 |
      | /_sandbox/no/such/path | localhost.evil.example       |

  @sandbox @rule:D18.1 @rule:D18.7
  Scenario Outline: A Host that is not a loopback name is 421 before routing, whatever the path and key
    Given the sandbox answers only loopback Hosts
    When I GET "<path>" with the header "Host" set to "<host>"
    Then the response status is 421
    And the response is JSON:
      """
      {"detail":"Misdirected Request"}
      """

    Examples:
      | path           | host                          |
      | /health        | evil.example                  |
      | /users/        | rebind.attacker.example:8080  |
      | /no/such/path/ | evil.example                  |
      | /health        | localhost.evil.example        |
      | /health        | evillocalhost                 |
      | /health        | xlocalhost:8080               |
      | /health        | 127.0.0.1.evil.example        |
      | /health        | 128.0.0.1                     |
      | /health        | 10.0.0.1:8080                 |
      | /health        | [::2]:8080                    |
      | /health        | [fe80::1]                     |
      | /health        | a!b.localhost                 |
      | /health        | a*b.localhost:8080            |
      | /health        | localhost:80a                 |
      | /health        | [::1                          |

  @sandbox @rule:D18.1 @rule:D18.7
  Scenario: A request without a key from a foreign Host is 421, not 401
    Given the sandbox answers only loopback Hosts
    When I GET "/users/" with the header "Host" set to "evil.example" without an API key
    Then the response status is 421

  @rule:D18.7
  Scenario: Every Host that is not a loopback name is answered alike, and a refusal is 421 before routing and key
    Given the deployment is a sandbox
    Then these Hosts are all refused with 421 before routing and key, or all answered:
      | host                         |
      | evil.example                 |
      | rebind.attacker.example:8080 |
      | localhost.evil.example       |
      | evillocalhost                |
      | xlocalhost:8080              |
      | 127.0.0.1.evil.example       |
      | 128.0.0.1                    |
      | 10.0.0.1:8080                |
      | [::2]:8080                   |
      | [fe80::1]                    |
      | a!b.localhost                |
      | a*b.localhost:8080           |

  @rule:D18.2
  Scenario Outline: Loopback names and addresses are answered
    Given the deployment is a sandbox
    When I GET "/health" with the header "Host" set to "<host>"
    Then the response status is 200

    Examples:
      | host                    |
      | localhost               |
      | localhost:8080          |
      | LocalHost.              |
      | app.localhost           |
      | my-app.localhost:5173   |
      | my_app.localhost        |
      | az.AZ.09.localhost      |
      | a.b.c.localhost.        |
      | 127.0.0.1               |
      | 127.255.0.9:8080        |
      | [::1]:8080              |
      | [::ffff:127.0.0.1]      |

  @sandbox @rule:D18.3
  Scenario Outline: DNS overrides take DNS host names only
    Then a DNS override of "<name>" to "93.184.216.34" is <outcome>

    Examples:
      | name                  | outcome  |
      | hooks.{unique}        | accepted |
      | my-hooks.{unique}     | accepted |
      | my_hooks.{unique}     | accepted |
      | a-b_c-9.{unique}      | accepted |
      | az09-z_a9.{unique}    | accepted |
      | Hooks.{unique}.       | accepted |
      | xn--bcher-kva.{unique} | accepted |
      | -hooks.{unique}       | refused  |
      | hooks-.{unique}       | refused  |
      | ho!oks.{unique}       | refused  |
      | ho oks.{unique}       | refused  |
      | hooks..{unique}       | refused  |
      | 93.184.216.34         | refused  |
      | [2001:db8::1]         | refused  |
      | 2001:db8::1           | refused  |
      | 127.1                 | refused  |
      | 2130706433            | refused  |
      | 0x7f.1                | refused  |
      | hooks.0x7f            | refused  |
      | localhost             | refused  |
      | app.localhost         | refused  |
      | 1.{unique}            | accepted |

  @sandbox @rule:D18.3
  Scenario: A DNS override takes at most 16 addresses
    Then a DNS override of "sixteen.{unique}" to 16 public addresses is accepted
    And a DNS override of "seventeen.{unique}" to 17 public addresses is refused

  @rule:D18.4
  Scenario Outline: The docs refuse framing and sniffing
    Given the deployment is a sandbox
    When I GET the sandbox page "<page>"
    Then the response status is 200
    And the response header "X-Content-Type-Options" is "nosniff"
    And the response header "X-Frame-Options" is "DENY"
    And the response header "Content-Security-Policy" has the directive "frame-ancestors 'none'"

    Examples:
      | page                    |
      | /docs                   |
      | /docs/swagger-ui.css    |

  @rule:D18.5
  Scenario Outline: A callback address embedding a loopback or private IPv4 address is refused at create
    When I subscribe the URL "<url>" to "kyc" events
    Then the response status is 400
    And the detail is "callback URL does not resolve to a public address"

    Examples:
      | url                                           |
      | https://[::a00:1]/hook                        |
      | https://[::7f00:1]/hook                       |
      | https://[64:ff9b::7f00:1]/hook                |
      | https://[2002:a00:1::1]/hook                  |
      | https://[2002:7f00:1::1]/hook                 |
      | https://[2001:0:a00:1::a247:27dd]/hook        |
      | https://[2001:0:5db8:d822::f5ff:fffe]/hook    |
      | https://[::ffff:0:7f00:1]/hook                |
      | https://[::ffff:0:a9fe:a9fe]/hook             |
      | https://[::ffff:0:a00:1]/hook                 |

  @rule:D18.8
  Scenario Outline: A callback address in a special-purpose block that is not globally reachable is refused at create
    When I subscribe the URL "<url>" to "kyc" events
    Then the response status is 400
    And the detail is "callback URL does not resolve to a public address"

    Examples:
      | url                                  |
      | https://[3fff::1]/hook               |
      | https://[3fff:fff:ffff::1]/hook      |
      | https://[5f00::1]/hook               |
      | https://[2001:2::1]/hook             |
      | https://[2001:10::1]/hook            |
      | https://[100:0:0:1::1]/hook          |
      | https://[64:ff9b:1:808:8:800:808:808]/hook |

  @sandbox @rule:D18.5
  Scenario: A callback host that comes to resolve to an embedded private address is refused at test
    Given a callback host "moving" resolving to "93.184.216.34"
    When I subscribe the URL "https://{moving}/hook" to "kyc" events
    Then the response status is 201
    Given the callback host "moving" now resolves to "2002:a00:1::1"
    When I POST "/webhooks/subscriptions/{subscription_id}/test"
    Then the response is JSON:
      """
      {"detail":"callback URL no longer resolves to a public address"}
      """

  @sandbox @rule:D18.6
  Scenario: The control plane reads a body of exactly 1 MiB and refuses one byte more with 413
    When I PUT the control plane "/_sandbox/dns" with the JSON "{}" padded with spaces to 1048576 bytes
    Then the response status is 200
    When I PUT the control plane "/_sandbox/dns" with the JSON "{}" padded with spaces to 1048577 bytes
    Then the response status is 413

  @rule:D18.9
  Scenario Outline: No folder is listed
    When I GET the sandbox page "<page>"
    Then the response status is 404

    Examples:
      | page                  |
      | /_sandbox/ui/static/  |

Feature: Health and routing
  GET /health needs no API key (spec §4.8). The shapes of health, unknown paths, wrong
  methods, trailing slashes and request ids are decisions D2's, modelled on FastAPI.

  @spec @rule:S4.8
  Scenario: Health answers without an API key
    When I GET "/health" without an API key
    Then the response status is 200

  @assumed @rule:D2.1
  Scenario: Health reports ok
    When I GET "/health" without an API key
    Then the response is JSON:
      """
      {"status":"ok"}
      """

  @assumed @rule:D2.3
  Scenario: An unknown path is 404 Not Found in the error envelope
    When I GET "/no/such/path/"
    Then the response status is 404
    And the response is JSON:
      """
      {"detail":"Not Found"}
      """

  @assumed @rule:D2.4
  Scenario: A known path with the wrong method is 405 with an Allow header
    When I DELETE "/users/"
    Then the response status is 405
    And the response is JSON:
      """
      {"detail":"Method Not Allowed"}
      """
    And the response header "Allow" lists "GET"

  @assumed @rule:D2.4
  Scenario: The subscriptions path allows exactly its methods
    When I PUT "/webhooks/subscriptions"
    Then the response status is 405
    And the response header "Allow" lists "GET, POST"

  @assumed @rule:D2.2
  Scenario: A path without its trailing slash redirects to the canonical path
    When I GET "/users"
    Then the response status is 307
    And the response header "Location" ends with "{base_path}/users/"

  @assumed @rule:D2.5
  Scenario: Every response carries the request id it was sent
    When I GET "/health" with the header "X-Request-Id" set to "contract-req-42"
    Then the response header "X-Request-Id" is "contract-req-42"

  @assumed @rule:D2.5
  Scenario: A response to a request without an id carries a generated one
    When I GET "/users/"
    Then the response header "X-Request-Id" is present

  @assumed @rule:D2.7
  Scenario: A cross-origin preflight gets no CORS answer
    When I OPTIONS "/users/" with the header "Origin" set to "https://app.example.com"
    Then the response status is 405
    And the response header "Access-Control-Allow-Origin" is absent

  @assumed @rule:D2.8
  Scenario: Health answers at the root too, outside any version
    When I GET "{origin}/health" without an API key
    Then the response status is 200
    And the response is JSON:
      """
      {"status":"ok"}
      """

  @assumed @rule:D2.9
  Scenario: The control plane is never under an API version
    When I GET "/_sandbox/capabilities" without an API key
    Then the response status is 404
    And the response is JSON:
      """
      {"detail":"Not Found"}
      """

  @assumed @rule:D19.2
  Scenario: The redirect's Location is the decoded path, quoted as Starlette quotes it
    When I GET "/users/a%3Fb?x" without an API key
    Then the response status is 307
    And the response header "Location" ends with "{base_path}/users/a?b/?x"
    When I GET "/users/%FF" without an API key
    Then the response status is 307
    And the response header "Location" ends with "{base_path}/users/%EF%BF%BD/"

  @assumed @rule:D19.5
  Scenario Outline: A redirect names the Host only when Starlette reads it as host[:port]
    When I GET "/orders?x=1" with the header "Host" set to "<host>" without an API key
    Then the response status is 307
    And the response header "Location" ends with "{base_path}/orders/?x=1"
    And the response header "Location" does not contain "//<host>/"

    Examples:
      | host             |
      | localhost:       |
      | [::1]:           |
      | 127.0.0.1:       |
      | my_app.localhost |

  @assumed @rule:D19.3
  Scenario: Allow goes with 405 only, never with a 404 or a redirect
    When I POST "/users//" without an API key
    Then the response status is 404
    And the response header "Allow" is absent
    When I POST "/users" without an API key
    Then the response status is 307
    And the response header "Allow" is absent

  @assumed @rule:D19.4
  Scenario: A route matches its path with one final newline, as Starlette's patterns do
    When I GET "/health%0A" without an API key
    Then the response status is 200
    And the response is JSON:
      """
      {"status":"ok"}
      """

  @assumed @rule:D19.6
  Scenario: The docs page redirects from its trailing-slash forms
    When I GET "{origin}/docs//" without an API key
    Then the response status is 307
    And the response header "Location" ends with "/docs"

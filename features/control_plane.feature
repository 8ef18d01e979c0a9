@assumed
Feature: Control plane
  The sandbox's own operations under /_sandbox/ (decisions D9), which the other features use to
  create their data: they need the sandbox token, and refuse what the state machines do not allow.
  That the token is needed is checked without it: against a sandbox given no --sandbox-url, at
  the base URL's origin.

  @rule:D9.1
  Scenario: The control plane needs its token
    Given the deployment is a sandbox
    When I GET the control plane "/_sandbox/capabilities" without a sandbox token
    Then the response status is 401
    And the response is JSON:
      """
      {"detail":"Not authenticated"}
      """
    When I GET the control plane "/_sandbox/capabilities" with the sandbox token "not-the-token"
    Then the response status is 401
    And the response is JSON:
      """
      {"detail":"Invalid sandbox token"}
      """

  @sandbox @rule:D9.3
  Scenario: A KYC move the state machine does not allow is 409
    Given a user "alice" with accounts:
      | product | kyc_status | cash |
      | crypto  | closed     | 0.00 |
    When I try to move the "crypto" account of "alice" to "approved"
    Then the response status is 409
    And the JSON at "detail" is a string

  @sandbox @rule:D9.5 @rule:D9.3
  Scenario: Every KYC move of the transition table is allowed, and no other
    Then every KYC move answers as the transition table says:
      | from               | to                                   |
      | pending            | document_requested, approved, rejected |
      | document_requested | pending, approved, rejected          |
      | approved           | closed, account_takeover             |
      | account_takeover   | approved, closed                     |
      | rejected           | pending, closed                      |
      | closed             | none                                 |

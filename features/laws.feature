Feature: Laws on the deployment's own data
  The rules of lists, filters, totals and identities hold for every record a deployment holds,
  not only for records a test made. These scenarios discover ids from the deployment's own lists
  and check the laws on all of them, so a run without a control plane checks them too (spec §2,
  §4.1–§4.3; decisions D5–D7). With a control plane, each scenario first makes a varied data
  set in its own institution (users of every product and KYC state, equal creation times, a
  member, orders of every status, a recurring order, a robo deposit of several legs).

  Background:
    Given the deployment has users and orders

  @spec @rule:S2.11 @rule:D6.1 @rule:D6.4 @rule:D6.3 @rule:S4.2.7
  Scenario: User pages in both orders are exact reverses, each user once, counted
    Then walking "/users/" descending and ascending with per_page 3 gives the exact reverse by "user_account_id"

  @assumed @rule:D6.2 @rule:D6.3
  Scenario: Sorting users by user_account_id sorts by the partner's id, both ways
    Then walking "/users/?sort_key=user_account_id" descending and ascending with per_page 2 gives the exact reverse by "user_account_id"
    And the users walked by "/users/?sort_key=user_account_id" are in ascending "user_account_id" order

  @spec @rule:S4.3.3 @rule:D6.3 @rule:D6.4
  Scenario: Order pages in both orders are exact reverses, most recently placed first
    Then walking "/orders/" descending and ascending with per_page 2 gives the exact reverse by "order_id"
    And the orders' placed_at never increases from one to the next

  @spec @rule:S4.2.1 @rule:S4.2.2 @rule:S4.2.3 @rule:D6.7
  Scenario: Every user filter selects exactly the users it names, and counts them
    Then every user filter selects exactly the users it names, and counts them

  @spec @rule:S4.3.1 @rule:D6.8
  Scenario: Every order filter selects exactly the orders it names, and counts them
    Then every order filter selects exactly the orders it names, and counts them

  @spec @rule:S4.3.2
  Scenario: placed_at bounds split the listed orders, inclusive start, exclusive end
    Then placed_at bounds at the placed_at of listed orders split them inclusive start, exclusive end

  @spec @rule:S4.2.4
  Scenario: created_at bounds at a user's own created_at include it from the start and exclude it at the end
    Then created_at bounds at a listed user's own created_at, found by bisection, include it from the start and exclude it at the end

  @assumed @rule:D6.5 @rule:D6.6
  Scenario: created_at bounds partition the users the same in every time format
    Then created_at bounds at "2025-06-01T00:00:00Z" partition the users, written as "2025-06-01, 2025-06-01T02:00:00+02:00, 2025-06-01T00:00:00, 1748736000"

  @spec @rule:S2.4 @rule:S2.9 @rule:D5.6 @rule:D5.8 @rule:S2.1
  Scenario: Every listed user's total is the exact sum of its accounts
    Then every listed user's total is the exact sum of its accounts

  @spec @rule:S2.5
  Scenario: Every listed account shows kyc_approved_at while approved, never while pending
    Then every listed account carries kyc_approved_at while approved and never while pending

  @spec @rule:S2.10 @rule:S2.3 @rule:D7.2 @rule:D5.11 @rule:S2.2 @rule:D4.7 @rule:D7.3
  Scenario: Every listed order is consistent with its status and belongs to a listed user
    Then every listed order is consistent with its status and belongs to a listed user

  @spec @rule:S4.1.1 @rule:S4.1.2 @rule:S2.8 @rule:D5.4
  Scenario: A user's detail agrees with the list and resolves through its identities
    Given an existing user "someone"
    Then the detail of "someone" agrees with its item of the user list
    And every identity of "someone" resolves to a user that it names

  @assumed @rule:D4.9
  Scenario: Every list is written byte for byte as FastAPI writes it
    Then every page of "/users/" is written byte for byte as FastAPI writes it
    And every page of "/users/?sort_key=user_account_id&sort_order=asc" is written byte for byte as FastAPI writes it
    And every page of "/orders/" is written byte for byte as FastAPI writes it

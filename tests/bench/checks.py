"""What the bench's Python tests share: failures collected by name, and the exit status.

    checks = Checks("my_test")
    checks.near("what", got, want, tol=1e-6)       # absolute tolerance
    checks.near("what", got, want, rel=0.01)       # relative tolerance
    checks.true("what", condition, "detail")
    return checks.finish()                         # prints FAIL lines and a verdict; 0 or 1"""


class Checks:
    def __init__(self, name):
        self.name = name
        self.failures = []

    def near(self, what, got, want, tol=None, rel=None):
        """got within tol of want (or within rel x |want|); None never is."""
        bound = tol if rel is None else rel * abs(want)
        if got is None or abs(got - want) > bound:
            self.failures.append(f"{what}: {got}, expected {want}")

    def true(self, what, condition, detail=""):
        if not condition:
            self.failures.append(f"{what}{': ' + detail if detail else ''}")

    def finish(self):
        for f in self.failures:
            print("FAIL:", f)
        print(f"{self.name}:", "FAILED" if self.failures else "passed")
        return 1 if self.failures else 0

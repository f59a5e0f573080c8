"""placeholder"""
def main() -> None:
    print("clawback")

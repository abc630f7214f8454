// What the documentation samples assume (placeholder while the documentation is rewritten).
import Courier

import Courier
import JWT
import Vapor

dummy trust store: package config checks only that this file can be read

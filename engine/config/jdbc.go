package config

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// JDBC is <jdbcPersistenceAdapter>: ActiveMQ's JDBC store on PostgreSQL
// (storage/jdbc), with the data source bean it names.
type JDBC struct {
	// DataSource is the id of the data source bean (dataSource="#id");
	// "" in YAML, which names the database itself.
	DataSource string
	// DataSourceClass is the bean's class (PGSimpleDataSource or
	// dbcp2's BasicDataSource).
	DataSourceClass string
	// Host, Port, Database, User, Password name the database: from the
	// bean's url (jdbc:postgresql://host:port/db) or its serverName,
	// portNumber, databaseName, user/username and password properties.
	Host     string
	Port     int
	Database string
	User     string
	Password string
	// SSLMode is the url's sslmode parameter ("" is the driver's
	// default, prefer).
	SSLMode string
	// MaxConnections bounds the pool (dbcp2's maxTotal); 0: one per
	// shard and a few more.
	MaxConnections int
	// MinConnections are kept open when idle (dbcp2's minIdle or
	// initialSize).
	MinConnections int
	// CreateTablesOnStartup creates the missing tables (ActiveMQ's
	// default true).
	CreateTablesOnStartup bool
	// TablePrefix goes before every table name (ActiveMQ's
	// statements' tablePrefix): letters, digits, _ and a schema's dot.
	TablePrefix string
	// UseLock: take a lock on ACTIVEMQ_LOCK before using the database
	// (ActiveMQ's default true), so that of two brokers on it one is
	// master and the other waits.
	UseLock bool
	// Locker is LockerDatabase (<database-locker>, the default) or
	// LockerLease (<lease-database-locker>).
	Locker string
	// LockAcquireSleepInterval is the wait between attempts to take the
	// lock, and the lease's length (10 s).
	LockAcquireSleepInterval time.Duration
	// LeaseHolderID names this broker in the lease; "" is the broker
	// name.
	LeaseHolderID string
	// MaxAllowableDiffFromDBTime: a local clock further than this from
	// the database's is corrected (lease locker; 0 trusts it).
	MaxAllowableDiffFromDBTime time.Duration
	// LockKeepAlivePeriod is how often a master renews its lease or
	// checks its lock (ms in XML; ActiveMQ's default 0: never; with the
	// lease locker Wharf then renews at half the lease).
	LockKeepAlivePeriod time.Duration
	// CleanupPeriod is ActiveMQ's cleanup task period (5 minutes).
	CleanupPeriod time.Duration
	// TransactionIsolation is java.sql.Connection's level number (1, 2,
	// 4, 8), 0 for the server's default.
	TransactionIsolation int
	// Line is where the adapter is declared (0 in YAML or Go).
	Line int
}

// The JDBC lockers.
const (
	LockerDatabase = "database" // <database-locker>: DefaultDatabaseLocker
	LockerLease    = "lease"    // <lease-database-locker>: LeaseDatabaseLocker
)

func defaultJDBC() JDBC {
	return JDBC{
		Port:                     5432, // PostgreSQL's
		CreateTablesOnStartup:    true, // JDBCPersistenceAdapter.createTablesOnStartup
		UseLock:                  true, // LockableServiceSupport.useLock
		Locker:                   LockerDatabase,
		LockAcquireSleepInterval: 10 * time.Second, // AbstractLocker.DEFAULT_LOCK_ACQUIRE_SLEEP_INTERVAL
		CleanupPeriod:            5 * time.Minute,
	}
}

// URL is the pgx connection string of the database (the password
// included: never log it; Redacted is for messages).
func (j *JDBC) URL() string {
	u := url.URL{Scheme: "postgres", Host: j.Host + ":" + strconv.Itoa(j.Port), Path: "/" + j.Database}
	if j.Password != "" {
		u.User = url.UserPassword(j.User, j.Password)
	} else if j.User != "" {
		u.User = url.User(j.User)
	}
	if j.SSLMode != "" {
		u.RawQuery = "sslmode=" + url.QueryEscape(j.SSLMode)
	}
	return u.String()
}

// Redacted names the database without the password.
func (j *JDBC) Redacted() string {
	return fmt.Sprintf("postgresql://%s@%s:%d/%s", j.User, j.Host, j.Port, j.Database)
}

const (
	pgSimpleDataSource = "org.postgresql.ds.PGSimpleDataSource"
	dbcp2DataSource    = "org.apache.commons.dbcp2.BasicDataSource"
	pgDriver           = "org.postgresql.Driver"
)

var dataSourceClasses = map[string]bool{pgSimpleDataSource: true, dbcp2DataSource: true}

// isolationLevels are transactionIsolation's values: java.sql.Connection's
// numbers, and in YAML also their names.
var isolationLevels = map[string]int{
	"0": 0, "1": 1, "2": 2, "4": 4, "8": 8,
	"read_uncommitted": 1, "read_committed": 2, "repeatable_read": 4, "serializable": 8,
	"TRANSACTION_READ_UNCOMMITTED": 1, "TRANSACTION_READ_COMMITTED": 2, "TRANSACTION_REPEATABLE_READ": 4, "TRANSACTION_SERIALIZABLE": 8,
}

func (l *loader) setIsolation(dst *int, v val) {
	l.record(v)
	s, ok := l.text(v)
	if !ok {
		return
	}
	n, ok := isolationLevels[strings.TrimSpace(s)]
	if !ok {
		l.bad(v, s, "not a transaction isolation level (1 read uncommitted, 2 read committed, 4 repeatable read, 8 serializable, or 0 for the server's default)")
		return
	}
	*dst = n
}

// setJDBCURL reads a PostgreSQL JDBC url, jdbc:postgresql://host[:port]/db
// with optional user, password and sslmode parameters, into j.
func (l *loader) setJDBCURL(j *JDBC, v val) {
	l.record(v)
	s, ok := l.text(v)
	if !ok {
		return
	}
	if err := parseJDBCURL(j, s); err != nil {
		l.bad(v, s, err.Error())
	}
}

func parseJDBCURL(j *JDBC, s string) error {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), "jdbc:postgresql:")
	if !ok {
		return fmt.Errorf("not a PostgreSQL JDBC url (want jdbc:postgresql://host:port/database; Wharf's JDBC store runs on PostgreSQL only)")
	}
	if !strings.HasPrefix(rest, "//") {
		// jdbc:postgresql:database: localhost, the default port.
		rest = "//localhost/" + rest
	}
	u, err := url.Parse(rest)
	if err != nil {
		return fmt.Errorf("not a valid url: %v", err)
	}
	if strings.Contains(u.Host, ",") {
		return fmt.Errorf("several hosts (%s) are not supported: name one", u.Host)
	}
	host := u.Hostname()
	if host == "" {
		host = "localhost"
	}
	j.Host = host
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return fmt.Errorf("port %q is not in 1..65535", p)
		}
		j.Port = n
	}
	j.Database = strings.TrimPrefix(u.Path, "/")
	for k, vs := range u.Query() {
		val := vs[len(vs)-1]
		switch k {
		case "user":
			j.User = val
		case "password":
			j.Password = val
		case "sslmode":
			j.SSLMode = val
		case "ApplicationName", "loginTimeout", "connectTimeout", "socketTimeout", "tcpKeepAlive":
			// The driver's tuning; pgx has its own defaults.
		default:
			return fmt.Errorf("url parameter %s is not supported by Wharf yet (user, password, sslmode are)", k)
		}
	}
	return nil
}

// jdbcAdapter reads <jdbcPersistenceAdapter> and the data source bean
// it names.
func (p *xmlParser) jdbcAdapter(k *xmlElem) {
	l, c := p.l, &p.l.cfg
	c.Persistence.Kind = KindJDBC
	l.note("persistence.jdbc", k.line, k.col, "<jdbcPersistenceAdapter>")
	j := &c.Persistence.JDBC
	j.Line = k.line
	const jp = "persistence.jdbc."
	for _, kk := range k.kids {
		if kk.name != "locker" {
			// <statements>, <adapter>: not yet.
			p.unsupported(kk, "persistence.jdbc", "")
			continue
		}
		lk := p.only(kk, "persistence.jdbc.locker", "database-locker", "lease-database-locker")
		if lk == nil {
			continue
		}
		p.noText(lk, "persistence.jdbc.locker")
		for _, kkk := range lk.kids {
			p.unsupported(kkk, "persistence.jdbc.locker", "")
		}
		l.note(jp+"locker", lk.line, lk.col, "<"+lk.name+">")
		hs := map[string]func(val){
			"lockAcquireSleepInterval": at(jp+"locker.lock_acquire_sleep_interval", func(v val) { l.setDuration(&j.LockAcquireSleepInterval, v) }),
		}
		j.Locker = LockerDatabase
		if lk.name == "lease-database-locker" {
			j.Locker = LockerLease
			hs["leaseHolderId"] = at(jp+"locker.lease_holder_id", func(v val) { l.setString(&j.LeaseHolderID, v) })
			hs["maxAllowableDiffFromDBTime"] = at(jp+"locker.max_allowable_diff_from_db_time", func(v val) { l.setDuration(&j.MaxAllowableDiffFromDBTime, v) })
		}
		p.attrs(lk, "persistence.jdbc.locker", hs)
	}
	var ds *val
	p.attrs(k, "persistence.jdbc", map[string]func(val){
		"dataSource": at(jp+"data_source", func(v val) {
			l.record(v)
			ds = &v
		}),
		"createTablesOnStartup": at(jp+"create_tables_on_startup", func(v val) { l.setBool(&j.CreateTablesOnStartup, v) }),
		"tablePrefix":           at(jp+"table_prefix", func(v val) { l.setString(&j.TablePrefix, v) }),
		"useLock":               at(jp+"use_lock", func(v val) { l.setBool(&j.UseLock, v) }),
		"lockKeepAlivePeriod":   at(jp+"lock_keep_alive_period", func(v val) { l.setDuration(&j.LockKeepAlivePeriod, v) }),
		// JDBCPersistenceAdapter.setLockAcquireSleepInterval: the default
		// locker's.
		"lockAcquireSleepInterval": at(jp+"locker.lock_acquire_sleep_interval", func(v val) { l.setDuration(&j.LockAcquireSleepInterval, v) }),
		"cleanupPeriod":            at(jp+"cleanup_period", func(v val) { l.setDuration(&j.CleanupPeriod, v) }),
		"transactionIsolation":     at(jp+"transaction_isolation", func(v val) { l.setIsolation(&j.TransactionIsolation, v) }),
		// The directory of ActiveMQ's lock file for an embedded
		// database: nothing for Wharf to do with one on PostgreSQL.
		"dataDirectory": at(jp+"data_directory", func(v val) { l.record(v) }),
	})
	noSource := func() {
		// Say it once: not again as "no database host" and the like.
		if l.unresolved == nil {
			l.unresolved = map[string]bool{}
		}
		l.unresolved[jp+"data_source"] = true
	}
	if ds == nil {
		noSource()
		// ActiveMQ's default is an embedded Derby (#derby).
		l.problemAt(jp+"data_source", k.line, k.col, `<jdbcPersistenceAdapter>: dataSource="#id" is required, naming a <bean class="`+pgSimpleDataSource+`"> or <bean class="`+dbcp2DataSource+`"> (Wharf has no embedded Derby)`)
		return
	}
	s, ok := l.text(*ds)
	if !ok {
		noSource()
		return
	}
	id, ok := strings.CutPrefix(strings.TrimSpace(s), "#")
	if !ok || id == "" {
		noSource()
		l.bad(*ds, s, `not a bean reference: write dataSource="#id"`)
		return
	}
	b := p.dataSources[id]
	if b == nil {
		noSource()
		l.bad(*ds, s, fmt.Sprintf(`no <bean id=%q class="%s"> (or %s) in the file`, id, pgSimpleDataSource, dbcp2DataSource))
		return
	}
	j.DataSource = id
	p.dataSourceBean(b, j)
}

// dataSourceBean reads a PGSimpleDataSource or BasicDataSource bean.
func (p *xmlParser) dataSourceBean(e *xmlElem, j *JDBC) {
	l := p.l
	class := attrValue(e, "class")
	j.DataSourceClass = class
	const jp = "persistence.jdbc."
	p.attrs(e, "persistence.jdbc", map[string]func(val){"class": func(val) {}, "id": func(val) {}, "destroy-method": func(val) {}})
	p.noText(e, "persistence.jdbc")
	// Which properties each class has (their Java setters).
	props := map[string]func(val){
		"url":      at(jp+"url", func(v val) { l.setJDBCURL(j, v) }),
		"password": at(jp+"password", func(v val) { l.setString(&j.Password, v) }),
	}
	if class == pgSimpleDataSource {
		props["serverName"] = at(jp+"host", func(v val) { l.setString(&j.Host, v) })
		props["serverNames"] = props["serverName"]
		props["portNumber"] = at(jp+"port", func(v val) { l.setInt(&j.Port, v) })
		props["portNumbers"] = props["portNumber"]
		props["databaseName"] = at(jp+"database", func(v val) { l.setString(&j.Database, v) })
		props["user"] = at(jp+"user", func(v val) { l.setString(&j.User, v) })
		props["sslMode"] = at(jp+"ssl_mode", func(v val) { l.setString(&j.SSLMode, v) })
	} else {
		props["username"] = at(jp+"user", func(v val) { l.setString(&j.User, v) })
		props["driverClassName"] = at(jp+"driver_class_name", func(v val) {
			l.record(v)
			if s, ok := l.text(v); ok && strings.TrimSpace(s) != pgDriver {
				l.bad(v, s, "not "+pgDriver+": Wharf's JDBC store runs on PostgreSQL only")
			}
		})
		props["maxTotal"] = at(jp+"max_connections", func(v val) { l.setInt(&j.MaxConnections, v) })
		props["minIdle"] = at(jp+"min_connections", func(v val) { l.setInt(&j.MinConnections, v) })
		props["initialSize"] = at(jp+"min_connections", func(v val) {
			n := 0
			l.setInt(&n, v)
			j.MinConnections = max(j.MinConnections, n)
		})
		// Pool tuning with nothing to set in pgx's pool: accepted.
		for _, name := range []string{"maxIdle", "poolPreparedStatements", "maxOpenPreparedStatements", "testOnBorrow", "validationQuery", "maxWaitMillis"} {
			props[name] = func(v val) { l.record(v) }
		}
	}
	for _, k := range e.kids {
		if k.name != "property" {
			p.unsupported(k, "persistence.jdbc", "")
			continue
		}
		var name string
		var value *val
		p.attrs(k, "persistence.jdbc", map[string]func(val){
			"name":  func(v val) { name = v.raw },
			"value": func(v val) { value = &v },
		})
		h, ok := props[name]
		if !ok {
			p.l.problemAt("persistence.jdbc", k.line, k.col, fmt.Sprintf("<bean class=%q>: <property name=%q> is not supported by Wharf yet", class, name))
			continue
		}
		if value == nil {
			if vs := propertyValues(p, k); len(vs) > 0 {
				value = &vs[0]
			}
		}
		if value == nil {
			p.l.problemAt("persistence.jdbc", k.line, k.col, fmt.Sprintf("<bean class=%q>: <property name=%q> has no value", class, name))
			continue
		}
		v := *value
		v.label = fmt.Sprintf("<bean id=%q> <property name=%q value=%q>", attrValue(e, "id"), name, v.raw)
		h(v)
	}
}

// jdbcKeys are the keys of YAML's persistence.jdbc.
func (p *yamlParser) jdbcKeys(j *JDBC) map[string]handler {
	return map[string]handler{
		"url":                      p.scalar(func(l *loader, v val) { l.setJDBCURL(j, v) }),
		"host":                     p.str(&j.Host),
		"port":                     p.integer(&j.Port),
		"database":                 p.str(&j.Database),
		"user":                     p.str(&j.User),
		"password":                 p.str(&j.Password),
		"ssl_mode":                 p.str(&j.SSLMode),
		"max_connections":          p.integer(&j.MaxConnections),
		"min_connections":          p.integer(&j.MinConnections),
		"create_tables_on_startup": p.boolean(&j.CreateTablesOnStartup),
		"table_prefix":             p.str(&j.TablePrefix),
		"use_lock":                 p.boolean(&j.UseLock),
		"lock_keep_alive_period":   p.duration(&j.LockKeepAlivePeriod),
		"locker": func(n *yaml.Node, path string) {
			p.mapping(n, path, map[string]handler{
				"type":                            p.str(&j.Locker),
				"lock_acquire_sleep_interval":     p.duration(&j.LockAcquireSleepInterval),
				"lease_holder_id":                 p.str(&j.LeaseHolderID),
				"max_allowable_diff_from_db_time": p.duration(&j.MaxAllowableDiffFromDBTime),
			})
		},
		"cleanup_period":        p.duration(&j.CleanupPeriod),
		"transaction_isolation": p.scalar(func(l *loader, v val) { l.setIsolation(&j.TransactionIsolation, v) }),
	}
}

func (p *yamlParser) jdbc(n *yaml.Node, path string) {
	c := &p.l.cfg
	c.Persistence.Kind = KindJDBC
	p.mapping(n, path, p.jdbcKeys(&c.Persistence.JDBC))
}

// validateJDBC checks that the database is named and the settings are
// in range.
func (l *loader) validateJDBC(j *JDBC) {
	const jp = "persistence.jdbc."
	if l.unresolved[jp+"data_source"] {
		return
	}
	if j.Host == "" {
		l.fail(jp+"host", "no database host: set the data source's url (jdbc:postgresql://host:port/database) or serverName")
	}
	if j.Database == "" {
		l.fail(jp+"database", "no database name: set the data source's url (jdbc:postgresql://host:port/database) or databaseName")
	}
	if j.Port <= 0 || j.Port > 65535 {
		l.fail(jp+"port", "%d is not in 1..65535", j.Port)
	}
	if j.MaxConnections < 0 {
		l.fail(jp+"max_connections", "%d is negative", j.MaxConnections)
	}
	if j.MinConnections < 0 {
		l.fail(jp+"min_connections", "%d is negative", j.MinConnections)
	}
	for _, r := range j.TablePrefix {
		if !(r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			l.fail(jp+"table_prefix", "%q may hold only letters, digits, _ and . (a schema)", j.TablePrefix)
			break
		}
	}
	if j.CleanupPeriod < 0 {
		l.fail(jp+"cleanup_period", "%s is negative", j.CleanupPeriod)
	}
	if j.LockKeepAlivePeriod < 0 {
		l.fail(jp+"lock_keep_alive_period", "%s is negative", j.LockKeepAlivePeriod)
	}
	if j.Locker != LockerDatabase && j.Locker != LockerLease {
		l.fail(jp+"locker.type", "%q is not database or lease", j.Locker)
	}
	if j.LockAcquireSleepInterval <= 0 {
		l.fail(jp+"locker.lock_acquire_sleep_interval", "%s must be positive", j.LockAcquireSleepInterval)
	}
	if j.MaxAllowableDiffFromDBTime < 0 {
		l.fail(jp+"locker.max_allowable_diff_from_db_time", "%s is negative", j.MaxAllowableDiffFromDBTime)
	}
	switch j.SSLMode {
	case "", "disable", "allow", "prefer", "require", "verify-ca", "verify-full":
	default:
		l.fail(jp+"ssl_mode", "%q is not one of disable, allow, prefer, require, verify-ca, verify-full", j.SSLMode)
	}
}
